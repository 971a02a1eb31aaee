import http2 from "node:http2";
import type { Express } from "express";

/**
 * Lets an Express app answer HTTP/2 requests (TLS with ALPN h2, or cleartext
 * prior knowledge), so browsers and curl reach the OIDC routes on any protocol
 * the port speaks.
 *
 * Express gives every request and response its own prototypes, which derive
 * from http.IncomingMessage and http.ServerResponse; on an HTTP/2 compat
 * request that would hide the HTTP/2 getters (headers, url, method…). Here the
 * app's prototypes are rebuilt with the same Express methods on top of
 * Http2ServerRequest / Http2ServerResponse instead. The app must be used for
 * HTTP/2 only.
 */
export function adaptToHttp2(app: Express): Express {
  app.request = rebase(app.request, http2.Http2ServerRequest.prototype, app) as Express["request"];
  app.response = rebase(app.response, http2.Http2ServerResponse.prototype, app) as Express["response"];
  return app;
}

function rebase(appProto: object, base: object, app: Express): object {
  const expressMethods = Object.getPrototypeOf(appProto) as object;
  const rebased = Object.create(base, Object.getOwnPropertyDescriptors(expressMethods)) as object;
  return Object.create(rebased, { app: { configurable: true, enumerable: true, writable: true, value: app } });
}

import http2 from "node:http2";
import type { Express } from "express";
import type { AnyRequest, AnyResponse } from "./exchange.ts";

/** Express's own entry point (what calling the app does); not in its published types. */
type Handle = (this: Express, req: AnyRequest, res: AnyResponse) => void;

/**
 * One Express app for requests of either protocol: HTTP/1.1, and HTTP/2
 * (TLS with ALPN h2, or cleartext prior knowledge) through Node's
 * compatibility API, so browsers and curl reach every route on any protocol
 * the port speaks, through the same router, routes and error handler.
 *
 * Express cannot take an HTTP/2 request as it is: for every request,
 * app.handle sets the request's and the response's prototypes to the app's
 * own (app.request, app.response), which derive from http.IncomingMessage
 * and http.ServerResponse and so would hide the HTTP/2 classes' getters
 * (headers, url, method…), and it has no option to choose them. So HTTP/2
 * requests are handed to a view of the same app (same router, settings and
 * locals) whose two prototypes carry the same Express methods on top of
 * Http2ServerRequest and Http2ServerResponse instead.
 *
 * A form body over HTTP/2 without a Content-Length is not read: body-parser
 * decides whether a request has a body from Content-Length or
 * Transfer-Encoding, and HTTP/2 frames a body without either. Such a post
 * is refused as a form without a body; clients send the length anyway.
 */
export function expressOnBothProtocols(app: Express): (req: AnyRequest, res: AnyResponse) => void {
  const handle = (app as unknown as { handle: Handle }).handle;
  const overHttp2 = Object.create(app, {
    request: { value: onto(app.request, http2.Http2ServerRequest.prototype, app) },
    response: { value: onto(app.response, http2.Http2ServerResponse.prototype, app) },
  }) as Express;
  return (req, res) => handle.call(req.httpVersionMajor === 2 ? overHttp2 : app, req, res);
}

/** The app's prototype (Express's methods over an HTTP/1.1 class) with the same methods over `base`. */
function onto(appProto: object, base: object, app: Express): object {
  const expressMethods = Object.getPrototypeOf(appProto) as object;
  const rebased = Object.create(base, Object.getOwnPropertyDescriptors(expressMethods)) as object;
  return Object.create(rebased, { app: { configurable: true, enumerable: true, writable: true, value: app } });
}

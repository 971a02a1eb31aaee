import http from "node:http";
import http2 from "node:http2";
import type { Express } from "express";
import type { AnyRequest, AnyResponse } from "./exchange.ts";

/** Express's own entry point (what calling the app does); not in its published types. */
type Handle = (this: Express, req: AnyRequest, res: AnyResponse) => void;

/** The classes Node's servers make each request and response from (their IncomingMessage… options). */
export interface RequestClasses {
  http1: { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse };
  http2: { Http2ServerRequest: typeof http2.Http2ServerRequest; Http2ServerResponse: typeof http2.Http2ServerResponse };
}

export interface ExpressOnNode {
  /** For the servers, from the start (requests made before an app is attached are plain Node ones, and Express sets their prototypes as usual). */
  classes: RequestClasses;
  /** Makes `app` the one Express app of both protocols (once: the classes become its own); the handler to give it every request that is not an RPC. */
  attach(app: Express): (req: AnyRequest, res: AnyResponse) => void;
}

/**
 * One Express app for requests of either protocol: HTTP/1.1, and HTTP/2
 * (TLS with ALPN h2, or cleartext prior knowledge) through Node's
 * compatibility API, so browsers and curl reach every route on any protocol
 * the port speaks, through the same router, routes and error handler.
 *
 * For every request, Express's app.handle sets the request's and the
 * response's prototypes to the app's own (app.request, app.response). Two
 * things follow, and this file is where both are met:
 *
 * - Express's prototypes derive from http.IncomingMessage and
 *   http.ServerResponse: set on an HTTP/2 request they would hide the HTTP/2
 *   classes' getters (headers, url, method…), and Express has no option to
 *   choose them. So HTTP/2 requests are handed to a view of the same app
 *   (same router, settings and locals) whose two prototypes carry Express's
 *   methods over Http2ServerRequest and Http2ServerResponse instead.
 * - Changing an object's prototype costs V8 more than the rest of Express's
 *   routing: an answer through Express cost about twice the CPU of the same
 *   answer from bare node:http, and most of the difference went when the
 *   prototype was already the one Express sets. So the servers make each
 *   request and response from a subclass of Node's class (their
 *   IncomingMessage… options) whose prototype becomes the app's: Express's
 *   setting it again changes nothing.
 *
 * An HTTP/2 body need not declare its length: the stream's END_STREAM ends
 * it (RFC 9113 §8.1.1), and Go's net/http or curl with a streamed body send
 * none. body-parser and type-is (req.is) decide whether a request has a
 * body from Content-Length or Transfer-Encoding only, so such a form would
 * go unread. See markBodyOfUnknownLength.
 */
export function expressOnNode(): ExpressOnNode {
  // Subclasses with nothing of their own yet: the servers make every request from them from the start.
  class Http1Request extends http.IncomingMessage {}
  class Http1Response extends http.ServerResponse {}
  class Http2Request extends http2.Http2ServerRequest {}
  class Http2Response extends http2.Http2ServerResponse {}
  return {
    classes: {
      http1: { IncomingMessage: Http1Request, ServerResponse: Http1Response as typeof http.ServerResponse },
      http2: { Http2ServerRequest: Http2Request, Http2ServerResponse: Http2Response as typeof http2.Http2ServerResponse },
    },
    attach(app) {
      const handle = (app as unknown as { handle: Handle }).handle;
      // Express's methods, and the app they belong to, on each subclass's prototype; those are now the app's.
      const requestMethods = expressMethods(app.request, app);
      const responseMethods = expressMethods(app.response, app);
      Object.defineProperties(Http1Request.prototype, requestMethods);
      Object.defineProperties(Http1Response.prototype, responseMethods);
      Object.defineProperties(Http2Request.prototype, requestMethods);
      Object.defineProperties(Http2Response.prototype, responseMethods);
      app.request = Http1Request.prototype as Express["request"];
      app.response = Http1Response.prototype as Express["response"];
      const http2View = Object.create(app, { request: { value: Http2Request.prototype }, response: { value: Http2Response.prototype } }) as Express;
      return (req, res) => {
        if (req.httpVersionMajor !== 2) {
          handle.call(app, req, res);
          return;
        }
        markBodyOfUnknownLength(req as http2.Http2ServerRequest);
        handle.call(http2View, req, res);
      };
    },
  };
}

/**
 * Gives an HTTP/2 request whose body follows its headers without a
 * Content-Length the header HTTP/1.1 gives such a body,
 * `Transfer-Encoding: chunked`, which is what body-parser and type-is read
 * as "a body of unknown length": they then read it to its end, with the
 * same size limit and the same 413 as a declared length. No HTTP/2 client
 * can have sent the header itself (RFC 9113 §8.2.2 forbids it, and nghttp2
 * refuses the stream), so it never hides what the client said. A stream
 * that ended with its headers has no body and is left as it is.
 */
function markBodyOfUnknownLength(req: http2.Http2ServerRequest): void {
  if (req.stream.endAfterHeaders || req.headers["content-length"] !== undefined) return;
  req.headers["transfer-encoding"] = "chunked";
}

/** What Express puts on an app's request or response prototype: its methods, and `app`. */
function expressMethods(appPrototype: object, app: Express): PropertyDescriptorMap {
  return {
    ...Object.getOwnPropertyDescriptors(Object.getPrototypeOf(appPrototype) as object),
    app: { configurable: true, enumerable: true, writable: true, value: app },
  };
}

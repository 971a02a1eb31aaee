import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQuery } from "node:querystring";
import type { Oidc } from "../domain/oidc/provider.ts";
import type { RawParameters } from "../domain/oidc/parameters.ts";
import { pageHeaderValues, securityHeaderValues } from "./middleware/page-headers.ts";
import { authorize, authorizePath, markFailed } from "./routes/oidc/authorize.ts";
import type { LeanEndpoints } from "./lean-client-endpoints.ts";
import { setHeaders } from "./set-headers.ts";

/**
 * The authorization endpoint's GET without Express, for the request a
 * browser sends on its way from an application: a GET to the exact path,
 * without a body. Express's router and response helpers cost a fifth of
 * such a request (docs/performance.md). Every other shape (POST, HEAD, a
 * trailing slash, a body) goes to the Express route, which stays the
 * reference.
 *
 * It does what the Express route does, with the same parts: the same
 * headers (securityHeaders, pageHeaders), the query parsed as Express 5's
 * "simple" query parser does (node:querystring), the same work (authorize)
 * and the same 303 (sendSeeOther). A request that fails is handed to the
 * Express route with its error (markFailed), so that errors, redirected to
 * the client or shown as a page, are answered by the one error handler.
 */
export function leanAuthorize(oidc: Oidc, express: (req: IncomingMessage, res: ServerResponse) => void): LeanEndpoints {
  const handle = authorize(oidc);
  return (req, res) => {
    if (req.method !== "GET" || !withoutBody(req)) return false;
    const url = req.url ?? "";
    const query = url.indexOf("?");
    if ((query === -1 ? url : url.slice(0, query)) !== authorizePath) return false;
    // The route the request log and metrics name, as Express would set it.
    (req as { route?: { path: string } }).route = { path: authorizePath };
    setHeaders(res, securityHeaderValues);
    setHeaders(res, pageHeaderValues);
    handle(req, res, parseQuery(query === -1 ? "" : url.slice(query + 1)) as RawParameters).catch((error: unknown) => {
      markFailed(req, error);
      express(req, res);
    });
    return true;
  };
}

/** A GET that says it has no body: none is to be read, limited or refused. */
function withoutBody(req: IncomingMessage): boolean {
  const h = req.headers;
  return h["transfer-encoding"] === undefined && (h["content-length"] === undefined || h["content-length"] === "0");
}

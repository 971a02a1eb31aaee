import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import { isUnavailable } from "../../storage/database.ts";
import type { Logger } from "../../observability/logger.ts";
import { HttpError } from "../errors.ts";
import { html } from "../pages/html.ts";
import { page } from "../pages/layout.ts";

/** Browsers get a page, everything else (APIs, curl) gets JSON. */
function send(req: Request, res: Response, status: number, error: string, description: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.status(status).set("Cache-Control", "no-store");
  const wantsPage = !req.path.startsWith("/api/") && req.accepts(["json", "html"]) === "html";
  if (wantsPage) {
    res.type("html").send(page(error.replace(/_/g, " "), html`<h1>${titleFor(status)}</h1><p>${description}</p>`));
  } else {
    res.json({ error, error_description: description });
  }
}

function titleFor(status: number): string {
  if (status === 404) return "Page not found";
  if (status === 413) return "Request too large";
  if (status === 503) return "Temporarily unavailable";
  if (status >= 500) return "Something went wrong";
  return "This request cannot be processed";
}

export const notFound: RequestHandler = (req, res) => {
  send(req, res, 404, "not_found", `no route for ${req.method} ${req.path}`);
};

/** Client mistakes are explained; server faults are logged and answered without details. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (err instanceof HttpError) return send(req, res, err.status, err.error, err.description);
    // body-parser and friends mark client errors with a status and `expose`.
    const e = err as { status?: number; expose?: boolean; type?: string; message?: string; limit?: number };
    if (e && typeof e.status === "number" && e.status >= 400 && e.status < 500) {
      if (e.type === "entity.too.large") {
        return send(req, res, 413, "request_too_large", `the request body exceeds the limit of ${e.limit} bytes`);
      }
      return send(req, res, e.status, "invalid_request", e.expose && e.message ? e.message : "the request is malformed");
    }
    if (isUnavailable(err)) {
      logger.warn({ err, path: req.path }, "database unavailable");
      res.set("Retry-After", "5");
      return send(req, res, 503, "temporarily_unavailable", "the service is temporarily unavailable, retry later");
    }
    logger.error({ err, path: req.path }, "request failed");
    send(req, res, 500, "server_error", "an unexpected error occurred");
  };
}

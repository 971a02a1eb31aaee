import { randomUUID } from "node:crypto";
import { routesWithSecretPaths } from "../http/secret-routes.ts";
import type { Http2ServerRequest } from "node:http2";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { AnyRequest, AnyResponse } from "./exchange.ts";
import type { RpcHandler } from "./connect-protocol/rpc-handler.ts";
import { answerUnknownProcedure } from "./connect-protocol/unknown-procedure.ts";
import { endUnreadBodyOnAnswer } from "./unread-http2-body.ts";

export interface RequestHandlerOptions {
  rpc: RpcHandler;
  /** Requests that are not procedures, on either protocol: the Express app (see expressOnNode). */
  http: (req: AnyRequest, res: AnyResponse) => void;
  logger: Logger;
  metrics: Metrics;
  isDraining: () => boolean;
  /** The public URL is https (TLS here or at a proxy in front): browsers are told to keep to it. */
  httpsOnly: boolean;
  /** A line per request at info (SHOMEI_ACCESS_LOG); off, no line is built at all. */
  accessLog: boolean;
}

/** One year, the usual minimum for HSTS preload lists; subdomains are not ours to decide. */
const strictTransportSecurity = "max-age=31536000";

export interface RequestHandler {
  (req: AnyRequest, res: AnyResponse): void;
  /** Requests that started and have not yet closed. */
  inFlight(): number;
}

const validRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The one entry point of every request on every protocol: give it an id, send
 * it to Connect when its path is a procedure, answer a call to a procedure
 * there is not (answerUnknownProcedure), send it to Express otherwise, and
 * measure it (and, with the access log on, log it) when it closes.
 */
export function createRequestHandler(options: RequestHandlerOptions): RequestHandler {
  const { rpc, logger, metrics } = options;
  let inFlight = 0;

  const handle = (req: AnyRequest, res: AnyResponse): void => {
    const started = process.hrtime.bigint();
    inFlight++;
    const incomingId = req.headers["x-request-id"];
    const requestId = typeof incomingId === "string" && validRequestId.test(incomingId) ? incomingId : randomUUID();
    res.setHeader("X-Request-Id", requestId);
    if (options.httpsOnly || isEncrypted(req)) res.setHeader("Strict-Transport-Security", strictTransportSecurity);
    const pathname = (req.url ?? "/").split("?", 1)[0] ?? "/";
    const procedure = rpc.match(pathname);
    const http2 = req.httpVersionMajor === 2;
    if (!http2 && options.isDraining()) res.setHeader("Connection", "close");
    if (http2) endUnreadBodyOnAnswer(req as Http2ServerRequest);

    res.once("close", () => {
      inFlight--;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const status = res.writableFinished ? res.statusCode : 499;
      const route = procedure ?? expressRoute(req) ?? "unmatched";
      metrics.observe(req.method ?? "", route, status, seconds);
      // Not even the log object is built when request lines are not written (access log off, or LOG_LEVEL above info).
      if (!options.accessLog || !logger.isLevelEnabled("info")) return;
      logger.info(
        {
          requestId,
          method: req.method,
          path: routesWithSecretPaths.has(route) ? route : pathname,
          route,
          status,
          durationMs: Math.round(seconds * 1e6) / 1e3,
          protocol: `HTTP/${req.httpVersion}`,
          ...(procedure ? { contentType: req.headers["content-type"] } : {}),
        },
        "request",
      );
    });

    if (procedure) {
      // An RPC's answer is the caller's own: secrets made for it (a client secret, a webhook secret, a
      // key) and personal data (certificate contents) must not be kept by a cache on the way or on disk.
      res.setHeader("Cache-Control", "no-store");
      rpc.handle(req, res, procedure);
    }
    else if (!answerUnknownProcedure(req, res, pathname)) options.http(req, res);
  };
  return Object.assign(handle, { inFlight: () => inFlight });
}

/** The Express route pattern that answered (bounded cardinality for metrics), if any did. */
function expressRoute(req: AnyRequest): string | undefined {
  const matched = req as unknown as { route?: { path?: unknown }; baseUrl?: string };
  return typeof matched.route?.path === "string" ? (matched.baseUrl ?? "") + matched.route.path : undefined;
}

function isEncrypted(req: AnyRequest): boolean {
  return Boolean((req.socket as { encrypted?: boolean } | undefined)?.encrypted);
}

import type { IncomingMessage, ServerResponse } from "node:http";
import qs from "qs";
import { parsePlainForm } from "./plain-form.ts";
import type { Oidc } from "../domain/oidc/provider.ts";
import type { RawParameters } from "../domain/oidc/parameters.ts";
import type { Logger } from "../observability/logger.ts";
import { corsAnswerHeaders } from "./middleware/cors.ts";
import { errorAnswer } from "./middleware/errors.ts";
import { securityHeaderValues } from "./middleware/page-headers.ts";
import { clientEndpointHeaders, identifyCaller, type FormEndpoint } from "./routes/oidc/client-endpoint.ts";
import { dpopHeaders } from "./routes/oidc/dpop-headers.ts";
import { setHeaders } from "./set-headers.ts";

/** The most parameters a form may hold, as express.urlencoded is told on these routes. */
const parameterLimit = 100;
const formType = /^application\/x-www-form-urlencoded\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** Takes the request when it is one of these endpoints' plain form posts (then true); false leaves it to Express. */
export type LeanEndpoints = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * PAR and the token endpoint without Express. Express's router, body parser
 * and response helpers cost about as much as the endpoints' own work: a
 * PAR answered here ran at 1.56x node-oidc-provider where the same through
 * Express ran at 0.74x (docs/performance.md). Only the plainest shape of a
 * request is taken, judged from its head before any of the body is read: a
 * POST to the exact path, `application/x-www-form-urlencoded` (UTF-8), a
 * Content-Length within the limit, no Content-Encoding or Transfer-Encoding.
 * Anything else goes to the Express routes, which stay the reference.
 *
 * What the Express route does, this does with the same parts: the same
 * headers (securityHeaders, CORS where the path has it, no-store, the DPoP
 * nonce), the form parsed by qs with express.urlencoded's options and
 * limits (a UTF-8 byte order mark dropped as its decoder does), the caller
 * identified by identifyCaller, the endpoint's answer, and errors answered
 * through errorAnswer, as the Express error handler answers them.
 */
export function leanClientEndpoints(oidc: Oidc, logger: Logger, endpoints: readonly FormEndpoint[]): LeanEndpoints {
  const byPath = new Map(endpoints.map((e) => [e.path, e]));
  return (req, res) => {
    const endpoint = req.method === "POST" ? byPath.get(req.url ?? "") : undefined;
    if (!endpoint || !takes(req, endpoint.options.limitBytes)) return false;
    // The route the request log and metrics name, as Express would set it.
    (req as { route?: { path: string } }).route = { path: endpoint.path };
    setHeaders(res, securityHeaderValues);
    if (endpoint.cors) setHeaders(res, corsAnswerHeaders);
    setHeaders(res, clientEndpointHeaders(oidc));

    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    // An aborted request ends in "close" without "end": nothing to answer, and the request log records it.
    req.on("error", () => undefined);
    req.once("end", () => {
      void answer(endpoint, req, Buffer.concat(chunks))
        .then(
          ({ status, body }) => sendJson(res, status, body),
          (error: unknown) => {
            const { status, headers, error: code, description } = errorAnswer(error, logger, endpoint.path);
            setHeaders(res, headers);
            res.setHeader("Cache-Control", "no-store");
            sendJson(res, status, description ? { error: code, error_description: description } : { error: code });
          },
        )
        // Writing the answer itself failed: nothing more can be said on this connection.
        .catch((error: unknown) => {
          logger.error({ err: error, path: endpoint.path }, "answer not sent");
          res.destroy();
        });
    });
    return true;
  };

  async function answer(endpoint: FormEndpoint, req: IncomingMessage, body: Buffer): Promise<{ status: number; body: unknown }> {
    const form = parseForm(body);
    const evidence = { authorization: req.headers.authorization, form, dpopProofs: dpopHeaders(req), remoteAddress: req.socket.remoteAddress ?? "unknown" };
    return endpoint.answer(await identifyCaller(oidc, endpoint.options, evidence));
  }
}

function takes(req: IncomingMessage, limitBytes: number): boolean {
  const h = req.headers;
  if (h["content-encoding"] !== undefined || h["transfer-encoding"] !== undefined) return false;
  if (!formType.test(h["content-type"] ?? "")) return false;
  const length = h["content-length"];
  return length !== undefined && /^\d{1,15}$/.test(length) && Number(length) <= limitBytes;
}

/** As express.urlencoded({ extended: false, parameterLimit: 100 }) parses, with the same errors. */
function parseForm(body: Buffer): RawParameters {
  const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  const text = body.toString("utf8", start);
  if (text.length === 0) return {};
  let count = 1;
  for (let i = text.indexOf("&"); i !== -1; i = text.indexOf("&", i + 1)) {
    if (++count > parameterLimit) throw clientMistake(413, "too many parameters");
  }
  const plain = parsePlainForm(text);
  if (plain) return plain as RawParameters;
  try {
    return qs.parse(text, { allowPrototypes: true, arrayLimit: count, depth: 0, charset: "utf-8", parameterLimit, strictDepth: true }) as RawParameters;
  } catch (error) {
    if (error instanceof RangeError) throw clientMistake(400, "The input exceeded the depth");
    throw error;
  }
}

/** An error as body-parser makes them: errorAnswer explains it to the client. */
function clientMistake(status: number, message: string): Error {
  return Object.assign(new Error(message), { status, expose: true });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

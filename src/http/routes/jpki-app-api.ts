import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { JpkiError } from "../../domain/oidc/jpki/jpki-error.ts";
import type { AppAnswer, AppStop, JpkiSignRequests } from "../../domain/oidc/jpki/sign-requests.ts";

/** Where an app reads and answers a signing request (docs/jpki-app-protocol.md). */
export const signRequestsPath = "/api/jpki/v1/sign-requests";

export function signRequestUrl(issuer: string, id: string): string {
  return `${issuer}${signRequestsPath}/${id}`;
}

/**
 * The link that opens a JPKI app on the phone the page is on: a scheme of
 * the protocol's own, carrying the request's URL (an https address would
 * open this page again, not an app).
 */
export const appLinkScheme = "shomei-jpki";
export function appLinkOf(requestUrl: string): string {
  return `${appLinkScheme}://sign?request=${encodeURIComponent(requestUrl)}`;
}

/** A certificate (base64 or PEM, up to 16 KB) and a signature: 64 KB leaves room to spare. */
const answerBody = express.json({ limit: 64 * 1024, strict: true, type: "application/json" });

const stops: readonly AppStop[] = ["pin_locked", "cancelled"];

/** Statuses by what the app is told; anything else keeps the refusal's own. */
const statusByWording: Partial<Record<string, number>> = { sign_request_unknown: 404, sign_request_expired: 410, sign_request_used: 409 };

class BadAnswer extends Error {}

const idOf = (req: Request) => (typeof req.params.id === "string" ? req.params.id : "");

/** The answer's JSON, checked at this one boundary: strings where strings belong, a signature or a stop, never both. */
function answerOf(body: unknown): AppAnswer {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new BadAnswer("the body must be a JSON object");
  const fields = body as Record<string, unknown>;
  const text = (name: string) => {
    const value = fields[name];
    if (value !== undefined && typeof value !== "string") throw new BadAnswer(`${name} must be a string`);
    return value;
  };
  const bindingCode = text("binding_code");
  if (!bindingCode) throw new BadAnswer("binding_code is required: the code the page shows, as the person typed it");
  const stopped = text("stopped");
  const certificate = text("certificate");
  const signature = text("signature");
  const attempts = fields.pin_attempts_remaining;
  if (attempts !== undefined) {
    if (stopped !== undefined || certificate !== undefined || signature !== undefined) throw new BadAnswer("pin_attempts_remaining is a report of its own, without a signature or a stop");
    if (!Number.isInteger(attempts) || (attempts as number) < 0 || (attempts as number) > 99) throw new BadAnswer("pin_attempts_remaining must be a whole number from 0 to 99");
    return { bindingCode, pinAttemptsRemaining: attempts as number };
  }
  if (stopped !== undefined) {
    if (certificate !== undefined || signature !== undefined) throw new BadAnswer("an answer is either a signature or a stop, not both");
    if (!stops.includes(stopped as AppStop)) throw new BadAnswer(`stopped must be one of ${stops.join(", ")}`);
    return { bindingCode, stopped: stopped as AppStop };
  }
  if (!certificate || !signature) throw new BadAnswer("certificate and signature are required (or stopped)");
  return { bindingCode, certificate, signature };
}

function refuse(res: Response, error: JpkiError): void {
  res.status(statusByWording[error.wording] ?? error.status).json({ error: error.wording, error_description: error.message });
}

/**
 * The JPKI app protocol: GET a signing request (what to sign, with which
 * certificate, for whom), POST the answer. Plain JSON for any app, no
 * cookies; the request's id is the capability, the binding code the
 * person's confirmation. What the answer leads to is shown on the page.
 */
export function registerJpkiAppApi(router: Router, signRequests: JpkiSignRequests, issuer: string): void {
  const noStore = (_req: Request, res: Response, next: NextFunction) => {
    res.set("Cache-Control", "no-store");
    next();
  };

  router.get(`${signRequestsPath}/:id`, noStore, async (req, res) => {
    try {
      const request = await signRequests.forApp(idOf(req));
      res.json({
        request: signRequestUrl(issuer, idOf(req)),
        service: issuer,
        purpose: request.purpose,
        client_name: request.clientName,
        certificate: request.certificateKind,
        text: request.challengeText,
        digest_algorithm: "sha256",
        signature_algorithm: "RSASSA-PKCS1-v1_5",
        binding_code_length: 6,
        expires_at: Math.floor(request.expiresAt / 1000),
      });
    } catch (error) {
      if (!(error instanceof JpkiError)) throw error;
      refuse(res, error);
    }
  });

  router.post(
    `${signRequestsPath}/:id`,
    noStore,
    answerBody,
    async (req: Request, res: Response) => {
      if (!req.is("application/json")) {
        res.status(415).json({ error: "invalid_request", error_description: "send the answer as application/json" });
        return;
      }
      try {
        const answer = answerOf(req.body);
        await signRequests.answer(idOf(req), answer);
        res.json({ state: "stopped" in answer ? "refused" : "pinAttemptsRemaining" in answer ? "pending" : "answered" });
      } catch (error) {
        if (error instanceof BadAnswer) {
          res.status(400).json({ error: "invalid_request", error_description: error.message });
          return;
        }
        if (!(error instanceof JpkiError)) throw error;
        refuse(res, error);
      }
    },
    // A body that is not JSON (or too large) is the app's mistake: said in JSON, never as a page.
    (error: { status?: number; type?: string }, _req: Request, res: Response, next: NextFunction) => {
      if (typeof error?.status !== "number" || error.status >= 500) return next(error);
      res.status(error.status).json({ error: "invalid_request", error_description: error.type === "entity.too.large" ? "the body is too large" : "the body is not valid JSON" });
    },
  );
}

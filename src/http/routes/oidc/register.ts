import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import type { ClientRegistration } from "../../../domain/oidc/registration/client-registration-service.ts";

export const registrationPath = "/api/oidc/v1/register";

/** Never cached: every answer may carry a secret or a registration access token (RFC 7591 section 3.2.1). */
function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.set({ "Cache-Control": "no-store", Pragma: "no-cache" });
  next();
}

/**
 * Client metadata as JSON: the type checked before reading, the body read
 * as text within the limit; the domain parses it once it has checked the
 * caller. A refusal is an OAuth error in JSON, never a page.
 */
function metadataText(limitBytes: number) {
  const read = express.text({ type: () => true, limit: limitBytes, defaultCharset: "utf-8" });
  return [
    (req: Request, _res: Response, next: NextFunction) => {
      if (!req.is("application/json")) return next(new OAuthError("invalid_request", "send the client metadata as application/json"));
      next();
    },
    read,
  ];
}

const textOf = (req: Request) => (typeof req.body === "string" ? req.body : "");

const clientIdOf = (req: Request) => (typeof req.params.clientId === "string" ? req.params.clientId : "");

/**
 * Dynamic client registration: POST /api/oidc/v1/register (RFC 7591), and
 * each registered client's configuration endpoint below it, GET, PUT and
 * DELETE (RFC 7592). Registered only while registration is on, so that
 * otherwise the paths answer 404 as any unknown path does.
 */
export function registerClientRegistrationRoutes(router: Router, registration: ClientRegistration, limitBytes: number): void {
  router.post(registrationPath, noStore, ...metadataText(limitBytes), async (req: Request, res: Response) => {
    const answer = await registration.register(textOf(req), { authorization: req.headers.authorization, remoteAddress: req.socket.remoteAddress ?? "unknown" });
    res.status(201).location(answer.registration_client_uri as string).json(answer);
  });
  router.get(`${registrationPath}/:clientId`, noStore, async (req: Request, res: Response) => {
    res.json(await registration.read(clientIdOf(req), req.headers.authorization));
  });
  router.put(`${registrationPath}/:clientId`, noStore, ...metadataText(limitBytes), async (req: Request, res: Response) => {
    res.json(await registration.update(clientIdOf(req), req.headers.authorization, textOf(req)));
  });
  router.delete(`${registrationPath}/:clientId`, noStore, async (req: Request, res: Response) => {
    await registration.remove(clientIdOf(req), req.headers.authorization);
    res.status(204).end();
  });
}

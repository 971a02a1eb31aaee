import type { Request, Response } from "express";
import type { Oidc } from "../../../domain/oidc/compose.ts";
import type { TokenRow } from "../../../storage/tokens-repository.ts";

/**
 * RFC 6750: the live access token of an `Authorization: Bearer` header, or
 * undefined after answering 401 with the challenge the RFC prescribes (no
 * error code when no token was sent, `invalid_token` otherwise).
 */
export async function requireAccessToken(oidc: Oidc, req: Request, res: Response): Promise<TokenRow | undefined> {
  res.set({ "Cache-Control": "no-store", Pragma: "no-cache" });
  const header = req.headers.authorization;
  // Another scheme (Basic, DPoP, …) carries no bearer token: RFC 6750 §3.1 answers that like a missing one, without an error code.
  if (!header || !/^Bearer /i.test(header)) {
    res.set("WWW-Authenticate", 'Bearer realm="shomei"').status(401).json({ error: "invalid_token", error_description: "an access token is required" });
    return undefined;
  }
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(header);
  const token = match ? await oidc.tokenAdministration.accessToken(match[1]!) : undefined;
  if (!token) {
    res
      .set("WWW-Authenticate", 'Bearer realm="shomei", error="invalid_token", error_description="the access token is invalid, expired or revoked"')
      .status(401)
      .json({ error: "invalid_token", error_description: "the access token is invalid, expired or revoked" });
    return undefined;
  }
  return token;
}

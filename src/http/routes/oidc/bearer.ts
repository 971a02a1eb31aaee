import type { Request, Response } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import type { TokenRow } from "../../../domain/oidc/model.ts";

const invalidTokenDescription = "the access token is invalid, expired or revoked";

/**
 * RFC 6750: the live access token of an `Authorization: Bearer` header. Throws
 * the 401 the RFC prescribes otherwise: a challenge without an error code when
 * no token was sent, `invalid_token` when it is not live.
 */
export async function requireAccessToken(oidc: Oidc, req: Request, res: Response): Promise<TokenRow> {
  res.set({ "Cache-Control": "no-store", Pragma: "no-cache" });
  const header = req.headers.authorization;
  // Another scheme (Basic, DPoP, …) carries no bearer token: RFC 6750 §3.1 answers that like a missing one, without an error code.
  if (!header || !/^Bearer /i.test(header)) {
    throw new OAuthError("invalid_token", "an access token is required", { status: 401, wwwAuthenticate: 'Bearer realm="shomei"' });
  }
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(header);
  const token = match ? await oidc.tokenAdministration.accessToken(match[1]!) : undefined;
  if (!token) {
    throw new OAuthError("invalid_token", invalidTokenDescription, {
      status: 401,
      wwwAuthenticate: `Bearer realm="shomei", error="invalid_token", error_description="${invalidTokenDescription}"`,
    });
  }
  return token;
}

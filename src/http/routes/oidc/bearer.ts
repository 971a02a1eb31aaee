import type { Request, Response } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import type { TokenRow } from "../../../domain/oidc/model.ts";
import { dpopHeaders, sendDpopNonce } from "./dpop-headers.ts";

/**
 * The live access token of a resource request, `Authorization: Bearer` (RFC
 * 6750) or `Authorization: DPoP` with its proof (RFC 9449 section 7); the
 * domain's ResourceAccess throws the 401 and challenge otherwise. `url` is
 * the endpoint's published URL, which the proof's htu must name. The
 * answer carries the current DPoP nonce when every proof needs one, and a
 * fresh one when the token's client must use nonces and its proof's is
 * about to expire.
 */
/** What a resource request uses of the provider. */
export type ResourceServices = Pick<Oidc, "resourceAccess" | "dpop">;

export async function requireAccessToken(oidc: ResourceServices, req: Request, res: Response, url: string): Promise<TokenRow> {
  res.set({ "Cache-Control": "no-store", Pragma: "no-cache" });
  sendDpopNonce(oidc, res);
  const admitted = await oidc.resourceAccess.require({ authorization: req.headers.authorization, proofs: dpopHeaders(req), method: req.method, url });
  if (admitted.freshNonce !== undefined) res.set("DPoP-Nonce", admitted.freshNonce);
  return admitted.token;
}

import { fapi2ProofRequirements } from "../fapi2-profile.ts";
import type { TokenRow } from "../model.ts";
import { OAuthError } from "../oauth-error.ts";
import type { ClientLookup } from "../stores.ts";
import type { TokenAdministration } from "../tokens/token-administration.ts";
import { BindingRefusal, noTokenChallenge, type TokenBinding } from "./token-binding.ts";


/** What a resource endpoint (userinfo, grant management) received. */
export interface PresentedAccessToken {
  authorization: string | undefined;
  /** Every `DPoP` header line, as received. */
  proofs: readonly string[];
  method: string;
  /** The endpoint's URL as the issuer publishes it (the proof's htu). */
  url: string;
}

/** The live token of a resource request, and a nonce to hand its client on the answer (see AdmittedBinding). */
export interface AdmittedAccessToken {
  token: TokenRow;
  freshNonce: string | undefined;
}

const invalidTokenDescription = "the access token is invalid, expired or revoked";
const tokenPattern = /^([A-Za-z0-9._~+/-]+=*)$/;

/** A refusal as HTTP answers it: 401 with the challenge of its scheme, and the nonce to retry with (RFC 9449 sections 7.1 and 9). */
function httpRefusal(refusal: BindingRefusal): OAuthError {
  return new OAuthError(refusal.reason, refusal.description, {
    status: 401,
    wwwAuthenticate: refusal.challenge(),
    ...(refusal.nonce !== undefined ? { headers: { "DPoP-Nonce": refusal.nonce } } : {}),
  });
}

/**
 * The live access token of an HTTP resource request: the token looked up,
 * then its presentation judged by TokenBinding under its client's proof
 * requirements (a fapi2 client's algorithms and nonce). Failures are 401
 * with the scheme's challenge.
 */
export class ResourceAccess {
  constructor(
    private readonly tokens: Pick<TokenAdministration, "accessToken">,
    private readonly binding: TokenBinding,
    private readonly clients: ClientLookup,
    private readonly fapi2: { requireDpopNonce: boolean },
  ) {}

  async require(request: PresentedAccessToken): Promise<AdmittedAccessToken> {
    const header = request.authorization;
    const scheme = header === undefined ? undefined : /^(Bearer|DPoP) /i.exec(header)?.[1]?.toLowerCase() as "bearer" | "dpop" | undefined;
    // Another scheme, or none, carries no token: answered like a missing one, without an error code.
    if (!header || !scheme) throw new OAuthError("invalid_token", "an access token is required", { status: 401, wwwAuthenticate: noTokenChallenge });
    const value = tokenPattern.exec(header.slice(scheme.length + 1))?.[1];
    const row = value === undefined ? undefined : await this.tokens.accessToken(value);
    if (!row) throw httpRefusal(new BindingRefusal("invalid_token", scheme === "bearer" ? "Bearer" : "DPoP", invalidTokenDescription));
    // Only a proof needs the client's requirements: a Bearer presentation costs no read.
    const client = scheme === "dpop" && row.dpopJkt !== null ? await this.clients.find(row.clientId) : undefined;
    try {
      const admitted = await this.binding.admit(
        { scheme, token: value!, proofs: request.proofs, method: request.method, url: request.url },
        row.dpopJkt,
        client ? fapi2ProofRequirements(client, this.fapi2) : {},
      );
      return { token: row, freshNonce: admitted.freshNonce };
    } catch (error) {
      if (error instanceof BindingRefusal) throw httpRefusal(error);
      throw error;
    }
  }
}

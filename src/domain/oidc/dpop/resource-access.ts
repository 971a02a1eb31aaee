import type { TokenRow } from "../model.ts";
import { OAuthError } from "../oauth-error.ts";
import type { TokenAdministration } from "../tokens/token-administration.ts";
import { dpopSigningAlgorithms } from "./algorithms.ts";
import type { DpopProofs } from "./dpop-proofs.ts";

/** What a resource endpoint (userinfo, grant management) received. */
export interface PresentedAccessToken {
  authorization: string | undefined;
  /** Every `DPoP` header line, as received. */
  proofs: readonly string[];
  method: string;
  /** The endpoint's URL as the issuer publishes it (the proof's htu). */
  url: string;
}

const realm = 'realm="shomei"';
const algs = `algs="${dpopSigningAlgorithms.join(" ")}"`;
const invalidTokenDescription = "the access token is invalid, expired or revoked";
const tokenPattern = /^([A-Za-z0-9._~+/-]+=*)$/;

/** Both schemes are offered when no token came (RFC 6750 section 3, RFC 9449 section 7.1). */
export const noTokenChallenge = `Bearer ${realm}, DPoP ${realm}, ${algs}`;

function challenge(scheme: "Bearer" | "DPoP", error: string, description: string): string {
  return `${scheme} ${realm}, error="${error}", error_description="${description}"${scheme === "DPoP" ? `, ${algs}` : ""}`;
}

function refused(scheme: "Bearer" | "DPoP", error: "invalid_token" | "invalid_dpop_proof", description: string): OAuthError {
  return new OAuthError(error, description, { status: 401, wwwAuthenticate: challenge(scheme, error, description) });
}

/**
 * The live access token of a resource request. `Bearer` carries a Bearer
 * token (RFC 6750); a DPoP-bound token presented that way is refused, since
 * without the proof anyone holding it could use it. `DPoP` carries a
 * DPoP-bound token with a proof of its key that hashes the token (`ath`,
 * RFC 9449 section 7). Failures are 401 with the scheme's challenge.
 */
export class ResourceAccess {
  constructor(
    private readonly tokens: Pick<TokenAdministration, "accessToken">,
    private readonly proofs: DpopProofs,
  ) {}

  async require(request: PresentedAccessToken): Promise<TokenRow> {
    const header = request.authorization;
    const scheme = header === undefined ? undefined : /^(Bearer|DPoP) /i.exec(header)?.[1]?.toLowerCase();
    // Another scheme, or none, carries no token: answered like a missing one, without an error code.
    if (!header || !scheme) throw new OAuthError("invalid_token", "an access token is required", { status: 401, wwwAuthenticate: noTokenChallenge });
    const value = tokenPattern.exec(header.slice(scheme.length + 1))?.[1];
    const row = value === undefined ? undefined : await this.tokens.accessToken(value);
    if (scheme === "bearer") {
      if (!row) throw refused("Bearer", "invalid_token", invalidTokenDescription);
      if (row.dpopJkt !== null) throw refused("DPoP", "invalid_token", "the access token is DPoP-bound: send it with the DPoP scheme and a proof");
      return row;
    }
    if (!row) throw refused("DPoP", "invalid_token", invalidTokenDescription);
    if (row.dpopJkt === null) throw refused("Bearer", "invalid_token", "the access token is not DPoP-bound: send it with the Bearer scheme");
    if (request.proofs.length === 0) throw refused("DPoP", "invalid_dpop_proof", "a DPoP proof is required with the DPoP scheme");
    let jkt: string | undefined;
    try {
      jkt = await this.proofs.check({ proofs: request.proofs, method: request.method, url: request.url, accessToken: value! });
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      throw error.withChallenge(401, challenge("DPoP", error.error, error.description));
    }
    if (jkt !== row.dpopJkt) throw refused("DPoP", "invalid_dpop_proof", "the DPoP proof is not signed by the key the access token is bound to");
    return row;
  }
}

import { OAuthError } from "../oauth-error.ts";
import { dpopSigningAlgorithms } from "./algorithms.ts";
import type { DpopProofs, ProofRequirements } from "./dpop-proofs.ts";

/**
 * Why a resource refuses a token's presentation, in RFC 9449 section 7.1's
 * words: every transport answers with these, HTTP as the `error` of its
 * challenge, RPCs as an ErrorInfo reason (src/rpc/errors.ts).
 */
export type BindingRefusalReason = "invalid_token" | "invalid_dpop_proof" | "use_dpop_nonce";

const realm = 'realm="shomei"';
const algs = `algs="${dpopSigningAlgorithms.join(" ")}"`;

/** Both schemes are offered when no token came (RFC 6750 section 3, RFC 9449 section 7.1). */
export const noTokenChallenge = `Bearer ${realm}, DPoP ${realm}, ${algs}`;

/**
 * A presentation refused: the reason, the scheme whose challenge fits (the
 * one the token should have come with), and for use_dpop_nonce the nonce
 * to retry with (RFC 9449 section 9).
 */
export class BindingRefusal extends Error {
  override name = "BindingRefusal";
  constructor(
    readonly reason: BindingRefusalReason,
    readonly scheme: "Bearer" | "DPoP",
    readonly description: string,
    readonly nonce?: string,
  ) {
    super(description);
  }

  /** The `WWW-Authenticate` value of the refusal (RFC 6750 section 3, RFC 9449 section 7.1). */
  challenge(): string {
    const base = `${this.scheme} ${realm}, error="${this.reason}", error_description="${this.description}"`;
    return this.scheme === "DPoP" ? `${base}, ${algs}` : base;
  }
}

/** A token as a resource request presented it. */
export interface PresentedToken {
  scheme: "bearer" | "dpop";
  token: string;
  /** Every `DPoP` header line, as received. */
  proofs: readonly string[];
  method: string;
  /** The resource's URL as the server publishes it (the proof's htu). */
  url: string;
}

/** What an admitted presentation proved. */
export interface AdmittedBinding {
  /** The key the proof showed; undefined for a Bearer token. */
  provenJkt: string | undefined;
  /** A nonce to hand the client on the answer, when the one its proof used is about to expire. */
  freshNonce: string | undefined;
}

/**
 * The one rule for presenting an access token at a resource (userinfo,
 * grant management, the RPCs), once its lookup found it: a Bearer token
 * with "Bearer"; a DPoP-bound token (cnf.jkt) only with "DPoP" and a proof
 * of that key for this request, hashing the token (ath), with a server
 * nonce when the token's client must use one (RFC 9449 sections 7 to 9).
 * A DPoP-bound token sent as Bearer is refused: without the proof anyone
 * holding it could use it.
 */
export class TokenBinding {
  constructor(private readonly proofs: DpopProofs) {}

  /** `requirements`: what the token's client's proofs must meet beyond RFC 9449 (fapi2ProofRequirements). */
  async admit(presented: PresentedToken, boundJkt: string | null, requirements: ProofRequirements): Promise<AdmittedBinding> {
    if (presented.scheme === "bearer") {
      if (boundJkt !== null) throw new BindingRefusal("invalid_token", "DPoP", "the access token is DPoP-bound: send it with the DPoP scheme and a proof");
      return { provenJkt: undefined, freshNonce: undefined };
    }
    if (boundJkt === null) throw new BindingRefusal("invalid_token", "Bearer", "the access token is not DPoP-bound: send it with the Bearer scheme");
    if (presented.proofs.length === 0) throw new BindingRefusal("invalid_dpop_proof", "DPoP", "a DPoP proof is required with the DPoP scheme");
    let checked;
    try {
      checked = await this.proofs.verify({ proofs: presented.proofs, method: presented.method, url: presented.url, accessToken: presented.token }, requirements);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (error.error === "use_dpop_nonce") throw new BindingRefusal("use_dpop_nonce", "DPoP", error.description, error.headers?.["DPoP-Nonce"]);
      throw new BindingRefusal("invalid_dpop_proof", "DPoP", error.description || "the DPoP proof is not valid");
    }
    requireKey(boundJkt, checked?.jkt);
    return { provenJkt: checked?.jkt, freshNonce: checked?.freshNonce };
  }
}

/** The key a proof showed is the one the token is bound to (also when a remembered lookup is confirmed later). */
export function requireKey(boundJkt: string | null, provenJkt: string | undefined): void {
  if (boundJkt !== null && provenJkt !== boundJkt) {
    throw new BindingRefusal("invalid_dpop_proof", "DPoP", "the DPoP proof is not signed by the key the access token is bound to");
  }
}

import { createHash } from "node:crypto";
import type { Clock } from "../../clock.ts";
import { OAuthError } from "../oauth-error.ts";
import type { DpopProofStore } from "../stores.ts";
import type { DpopNonces } from "./nonce.ts";
import { invalidProof, verifyProof, type ProofTarget, type ProofTimePolicy } from "./proof.ts";

export interface DpopSettings extends ProofTimePolicy {
  /** When set, every proof must carry a nonce this server issued (RFC 9449 section 8). */
  nonces: DpopNonces | undefined;
  /** When `nonces` is not set: the nonces of the requests whose caller requires one (ProofRequirements.requireNonce). */
  noncesOnRequest?: DpopNonces | undefined;
}

/** What a caller may require of a proof beyond RFC 9449, for one client (see fapi2ProofRequirements). */
export interface ProofRequirements {
  /** The only algorithms accepted. */
  algorithms?: readonly string[] | undefined;
  /** A server nonce, even when nonces are not required of every proof. */
  requireNonce?: boolean | undefined;
}

/** A request's DPoP headers as they arrived (each header line separately) and what the request was. */
export interface ProofInput extends ProofTarget {
  proofs: readonly string[];
}

/**
 * The DPoP proof check every endpoint shares: at most one `DPoP` header, a
 * valid proof for this request, its nonce when nonces are required, and its
 * jti never seen before (recorded in the database until the iat window has
 * passed, so a replay fails on every instance). Returns the thumbprint of
 * the key proven, or undefined when the request carries no proof.
 */
export class DpopProofs {
  constructor(
    private readonly store: DpopProofStore,
    private readonly settings: DpopSettings,
    private readonly clock: Clock,
  ) {}

  /** The nonce to send in `DPoP-Nonce` now, when nonces are required. */
  currentNonce(): string | undefined {
    return this.settings.nonces?.current(this.clock());
  }

  async check(input: ProofInput, requirements: ProofRequirements = {}): Promise<string | undefined> {
    return (await this.verify(input, requirements))?.jkt;
  }

  /**
   * As check, and when the proof's nonce is from the slot before (still
   * accepted, but not for long) the current nonce to hand the client, so
   * that a client that keeps calling never meets use_dpop_nonce.
   */
  async verify(input: ProofInput, requirements: ProofRequirements = {}): Promise<{ jkt: string; freshNonce: string | undefined } | undefined> {
    if (input.proofs.length === 0) return undefined;
    if (input.proofs.length > 1) throw invalidProof("send exactly one DPoP header");
    const now = this.clock();
    const proof = await verifyProof(input.proofs[0]!, input, this.settings, now);
    if (requirements.algorithms && !requirements.algorithms.includes(proof.alg)) {
      throw invalidProof(`this client's DPoP proofs must be signed with ${requirements.algorithms.join(", ")}`);
    }
    const nonces = this.settings.nonces ?? (requirements.requireNonce ? this.settings.noncesOnRequest : undefined);
    if (nonces && (proof.nonce === undefined || !nonces.accepts(proof.nonce, now))) {
      throw new OAuthError("use_dpop_nonce", "the DPoP proof must carry the nonce from the DPoP-Nonce header", {
        headers: { "DPoP-Nonce": nonces.current(now) },
      });
    }
    const current = nonces?.current(now);
    const freshNonce = current !== undefined && proof.nonce !== current ? current : undefined;
    const key = createHash("sha256").update(JSON.stringify([proof.jkt, proof.jti])).digest("hex");
    // Kept until the proof could no longer pass the iat check anyway.
    const expiresAt = (proof.iat + this.settings.maxAgeSeconds + 1) * 1000;
    if (!(await this.store.useOnce(key, Math.max(expiresAt, now + 1000), now))) {
      throw invalidProof("the DPoP proof was already used (jti replayed)");
    }
    return { jkt: proof.jkt, freshNonce };
  }
}

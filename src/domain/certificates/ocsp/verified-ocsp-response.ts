import { sameBytes } from "../same-bytes.ts";
import type { RevocationReasonCode, Status } from "../model.ts";

/*
 * What a verified OCSP response is, and the rules about it that need no ASN.1:
 * reading one (ocsp-response.ts) needs the schema library, which a server
 * loads only when it first asks a responder or reads a stored response
 * (ocsp-codec.ts).
 */

/** Why a response was not used; the check then answers unavailable, never good. */
export type OcspRejection =
  | "try_later"
  | "error_status"
  | "malformed"
  | "signature_invalid"
  | "unauthorized_signer"
  | "no_matching_response"
  | "unknown_critical_extension"
  | "nonce_mismatch"
  | "not_current";

export class OcspRejectedError extends Error {
  override name = "OcspRejectedError";
  constructor(
    readonly rejection: OcspRejection,
    message: string,
  ) {
    super(message);
  }
}

/** A response whose signature, signer and CertID have been checked; what depends on the moment is left to usableAt. */
export interface VerifiedOcspResponse {
  /** SHA-256 of the DER, hex. */
  sha256: string;
  status: Status;
  revokedAt: number | null;
  revokedReason: RevocationReasonCode | null;
  producedAt: number;
  thisUpdate: number;
  nextUpdate: number | undefined;
  /** The validity of the delegated responder certificate that signed it; undefined when the issuer signed it. */
  signerValidity: { notBefore: number; notAfter: number } | undefined;
  /** The nonce extension's extnValue, when the response carries one. */
  nonceValue: Uint8Array | undefined;
}

function rejected(rejection: OcspRejection, message: string): OcspRejectedError {
  return new OcspRejectedError(rejection, message);
}

/** The nonce check of RFC 8954 §2.1: a response to a request with a nonce must echo it exactly. */
export function checkNonce(response: VerifiedOcspResponse, sentValue: Uint8Array): void {
  if (!response.nonceValue) throw rejected("nonce_mismatch", "the response carries no nonce, and one was sent");
  if (!sameBytes(response.nonceValue, sentValue)) throw rejected("nonce_mismatch", "the response's nonce is not the one sent");
}

/** Clock skew allowed for a responder whose thisUpdate is slightly ahead of ours. */
export const allowedSkewMs = 60_000;

/**
 * Until when a response may answer: its nextUpdate, or, when it has none
 * (RFC 6960: newer information is always available), thisUpdate plus
 * `withoutNextUpdateMs`. Never past the delegated signer's notAfter.
 */
export function usableUntil(response: VerifiedOcspResponse, withoutNextUpdateMs: number): number {
  const until = response.nextUpdate ?? response.thisUpdate + withoutNextUpdateMs;
  return response.signerValidity ? Math.min(until, response.signerValidity.notAfter) : until;
}

/** Why the response may not answer at `now`, or undefined when it may. */
export function notUsableAt(response: VerifiedOcspResponse, now: number, withoutNextUpdateMs: number): string | undefined {
  const iso = (ms: number) => new Date(ms).toISOString();
  if (response.signerValidity && (now < response.signerValidity.notBefore || now >= response.signerValidity.notAfter)) {
    return "the responder certificate that signed it is not valid now";
  }
  if (response.thisUpdate > now + allowedSkewMs) return `its thisUpdate (${iso(response.thisUpdate)}) is in the future`;
  const until = usableUntil(response, withoutNextUpdateMs);
  if (now >= until) {
    return response.nextUpdate === undefined
      ? `it has no nextUpdate and its thisUpdate (${iso(response.thisUpdate)}) is too old`
      : `it is stale: nextUpdate ${iso(response.nextUpdate)} has passed`;
  }
  return undefined;
}

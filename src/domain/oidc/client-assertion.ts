import { createHash } from "node:crypto";
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyOptions,
  type JWTVerifyResult,
} from "jose";
import { jwtNestingWithin } from "../json-nesting.ts";
import type { OneTimeStore } from "../single-use.ts";
import { invalidClient, type ClientAuthError, type ClientAuthFailureReason } from "./client-auth-error.ts";

/** The only `client_assertion_type` accepted (RFC 7523 §2.2). */
export const jwtBearerAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/**
 * Asymmetric signature algorithms only: `none` proves nothing, and the HS*
 * family (client_secret_jwt) would need the secret in clear, which is never
 * stored.
 */
export const clientAssertionAlgorithms: readonly string[] = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

/** The one_time_records kind under which used assertion identifiers are kept. */
export const clientAssertionJtiKind = "client_assertion_jti";

export interface ClientAssertionPolicy {
  /** Allowed clock skew, in seconds, for exp, nbf and iat. */
  clockToleranceSeconds: number;
  /** Longest accepted assertion lifetime, in seconds (exp − iat, and exp − now). */
  maxLifetimeSeconds: number;
}

/**
 * What can be read from an assertion before its client is known: that it is a
 * JWT, that its algorithm is acceptable, and its (unverified) subject, which
 * names the client when the body carries no client_id.
 */
export function inspectClientAssertion(assertion: string): { subject: string | undefined } {
  let alg: unknown;
  let payload: JWTPayload;
  // jose parses the header and payload with JSON.parse: a deeply nested one is refused first (json-nesting.ts).
  if (!jwtNestingWithin(assertion)) throw invalidClient("assertion_malformed", { description: "client_assertion is not a well-formed JWT" });
  try {
    alg = decodeProtectedHeader(assertion).alg;
    payload = decodeJwt(assertion);
  } catch {
    throw invalidClient("assertion_malformed", { description: "client_assertion is not a well-formed JWT" });
  }
  if (typeof alg !== "string" || !clientAssertionAlgorithms.includes(alg)) {
    throw invalidClient("assertion_algorithm_not_allowed", { description: "client_assertion must be signed with an asymmetric algorithm" });
  }
  return { subject: typeof payload.sub === "string" && payload.sub !== "" ? payload.sub : undefined };
}

export interface VerifiedClientAssertion {
  jti: string;
  /** Expiry, in seconds since the epoch. */
  exp: number;
  /** The header's alg and the aud claim as sent (a string or an array of one), for the client's profile rules. */
  alg: string;
  aud: unknown;
}

/**
 * Verifies the signature against the client's registered keys and the claims
 * of RFC 7523 §3 and OpenID Connect Core §9. Throws ClientAuthError.
 */
export async function verifyClientAssertion(
  assertion: string,
  clientId: string,
  jwks: JSONWebKeySet,
  audiences: readonly string[],
  nowMs: number,
  policy: ClientAssertionPolicy,
): Promise<VerifiedClientAssertion> {
  const tolerance = policy.clockToleranceSeconds;
  let payload: JWTPayload;
  let alg: string;
  try {
    let protectedHeader: { alg?: string | undefined };
    ({ payload, protectedHeader } = await verifyWithKeySet(assertion, jwks, {
      algorithms: [...clientAssertionAlgorithms],
      issuer: clientId,
      subject: clientId,
      audience: [...audiences],
      requiredClaims: ["exp", "jti"],
      clockTolerance: tolerance,
      currentDate: new Date(nowMs),
    }));
    alg = protectedHeader.alg ?? "";
  } catch (error) {
    throw fromJoseError(error);
  }
  // The audience must be exactly one value (OAuth 2.0 Security BCP; draft-ietf-oauth-rfc7523bis): an assertion
  // that also names another server may have been made for that server and replayed here.
  if (Array.isArray(payload.aud) && payload.aud.length !== 1) throw invalidClient("assertion_audience_invalid");
  const { jti, exp, iat } = payload;
  if (typeof jti !== "string" || jti === "") throw invalidClient("assertion_claim_missing");
  if (typeof exp !== "number") throw invalidClient("assertion_claim_missing");
  const now = Math.floor(nowMs / 1000);
  if (typeof iat === "number") {
    if (iat > now + tolerance) throw invalidClient("assertion_not_yet_valid");
    if (exp - iat > policy.maxLifetimeSeconds) throw invalidClient("assertion_lifetime_too_long");
  }
  // Without iat, the remaining lifetime is what can be bounded; with it, this
  // also stops an iat set in the future from stretching the window.
  if (exp - now > policy.maxLifetimeSeconds + tolerance) throw invalidClient("assertion_lifetime_too_long");
  return { jti, exp, alg, aud: payload.aud };
}

/**
 * Marks the assertion's jti as used, once. The record lives until the
 * assertion can no longer be accepted (exp plus the clock tolerance), so a
 * replay inside that window always finds it. Of several concurrent requests
 * carrying the same assertion, the database lets exactly one consume it.
 * Must not run inside a database transaction: a losing insert on PostgreSQL
 * would abort it.
 */
export async function useClientAssertionOnce(
  records: OneTimeStore,
  clientId: string,
  assertion: VerifiedClientAssertion,
  nowMs: number,
  policy: ClientAssertionPolicy,
): Promise<void> {
  const keyHash = createHash("sha256").update(JSON.stringify([clientId, assertion.jti])).digest("hex");
  const ttlMs = Math.max(1000, Math.ceil((assertion.exp + policy.clockToleranceSeconds) * 1000) - nowMs);
  try {
    await records.issue({ kind: clientAssertionJtiKind, keyHash, owner: clientId, payload: null, now: nowMs, ttlMs });
  } catch (error) {
    // A concurrent or earlier request with the same jti inserted first (the key
    // is the primary key); consume below decides. No record means the insert
    // failed for another reason, which is a storage failure, not a replay.
    if (!(await records.find(clientAssertionJtiKind, keyHash))) throw error;
  }
  const result = await records.consume(clientAssertionJtiKind, keyHash, nowMs);
  if (!result.ok) throw invalidClient("assertion_replayed");
}

/**
 * jwtVerify with a local key set (client assertions, request objects), trying each candidate when several keys
 * match the header (no kid, as during a key rotation).
 */
export async function verifyWithKeySet(assertion: string, jwks: JSONWebKeySet, options: JWTVerifyOptions): Promise<JWTVerifyResult> {
  const keySet = createLocalJWKSet(jwks);
  try {
    return await jwtVerify(assertion, keySet, options);
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
    for await (const key of error) {
      try {
        return await jwtVerify(assertion, key, options);
      } catch (inner) {
        if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

function fromJoseError(error: unknown): ClientAuthError {
  return invalidClient(reasonFor(error));
}

function reasonFor(error: unknown): ClientAuthFailureReason {
  if (error instanceof errors.JWTExpired) return "assertion_expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.reason === "missing") return "assertion_claim_missing";
    switch (error.claim) {
      case "iss":
        return "assertion_issuer_invalid";
      case "sub":
        return "assertion_subject_invalid";
      case "aud":
        return "assertion_audience_invalid";
      case "nbf":
        return "assertion_not_yet_valid";
      default:
        return "assertion_malformed";
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return "assertion_algorithm_not_allowed";
  if (error instanceof errors.JWKSInvalid) return "client_not_configured";
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return "assertion_malformed";
  // No matching key, a bad signature, or a registered key that cannot verify
  // (unsupported, or an RSA modulus under 2048 bits).
  return "assertion_signature_invalid";
}

import { createHash } from "node:crypto";
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify, type JWK, type JWTPayload } from "jose";
import { jwtNestingWithin } from "../../json-nesting.ts";
import { OAuthError } from "../oauth-error.ts";
import { dpopSigningAlgorithms, isDpopSigningAlgorithm } from "./algorithms.ts";
import { comparableHtu } from "./htu.ts";
import { hasPrivateMembers } from "../public-jwk.ts";

/** How old (and how far in the future) a proof's `iat` may be. */
export interface ProofTimePolicy {
  maxAgeSeconds: number;
  futureSkewSeconds: number;
}

/** What the request the proof came with was. */
export interface ProofTarget {
  /** The HTTP method, upper case. */
  method: string;
  /** The endpoint's URL as the issuer publishes it. */
  url: string;
  /** At a resource endpoint: the access token, whose hash the proof must carry (`ath`). */
  accessToken?: string | undefined;
}

/** A proof whose signature, header and claims passed; replay and nonce are checked by the caller. */
export interface VerifiedProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's key. */
  jkt: string;
  jti: string;
  /** Seconds since the epoch. */
  iat: number;
  nonce: string | undefined;
  /** The header's alg, one of dpopSigningAlgorithms. */
  alg: string;
}

const maxJtiLength = 256;

export function invalidProof(description: string): OAuthError {
  return new OAuthError("invalid_dpop_proof", description);
}

/**
 * Checks a DPoP proof JWT (RFC 9449 section 4.3) for one request: `typ`
 * dpop+jwt, an allowed asymmetric `alg`, a public `jwk` in the header that
 * verifies the signature, and the claims `jti`, `htm`, `htu` (without query
 * and fragment), `iat` inside the window and, with an access token, `ath`.
 * Every failure is invalid_dpop_proof with a description naming the check.
 */
export async function verifyProof(proof: string, target: ProofTarget, policy: ProofTimePolicy, nowMs: number): Promise<VerifiedProof> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    // jose parses the header with JSON.parse: a deeply nested one is refused first (json-nesting.ts).
    if (!jwtNestingWithin(proof)) throw new TypeError("nested too deep");
    header = decodeProtectedHeader(proof);
  } catch {
    throw invalidProof("the DPoP proof is not a JWT");
  }
  if (proof.split(".").length !== 3) throw invalidProof("the DPoP proof is not a signed JWT");
  if (header.typ !== "dpop+jwt") throw invalidProof("the DPoP proof's typ must be dpop+jwt");
  if (!isDpopSigningAlgorithm(header.alg)) {
    throw invalidProof(`the DPoP proof's alg must be one of ${dpopSigningAlgorithms.join(", ")}`);
  }
  const jwk = header.jwk as Record<string, unknown> | undefined;
  if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) throw invalidProof("the DPoP proof's header must carry the public key (jwk)");
  if (hasPrivateMembers(jwk)) throw invalidProof("the DPoP proof's jwk must be a public key without private members");

  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, { typ: "dpop+jwt", algorithms: [...dpopSigningAlgorithms] }));
  } catch {
    throw invalidProof("the DPoP proof's signature does not verify with its jwk");
  }

  const jti = payload.jti;
  if (typeof jti !== "string" || jti.length === 0 || jti.length > maxJtiLength) throw invalidProof(`the DPoP proof needs a jti of 1-${maxJtiLength} characters`);
  if (payload.htm !== target.method) throw invalidProof(`the DPoP proof's htm must be ${target.method}`);
  const htu = typeof payload.htu === "string" ? comparableHtu(payload.htu) : undefined;
  if (htu === undefined || htu !== comparableHtu(target.url)) throw invalidProof(`the DPoP proof's htu must be ${target.url}`);
  const iat = payload.iat;
  if (typeof iat !== "number" || !Number.isFinite(iat)) throw invalidProof("the DPoP proof needs a numeric iat");
  const now = nowMs / 1000;
  if (iat < now - policy.maxAgeSeconds) throw invalidProof(`the DPoP proof is too old (iat more than ${policy.maxAgeSeconds} seconds ago)`);
  if (iat > now + policy.futureSkewSeconds) throw invalidProof("the DPoP proof's iat is in the future");
  if (target.accessToken !== undefined) {
    if (typeof payload.ath !== "string") throw invalidProof("the DPoP proof must carry ath, the hash of the access token");
    if (payload.ath !== accessTokenHash(target.accessToken)) throw invalidProof("the DPoP proof's ath does not match the access token");
  }
  const nonce = typeof payload.nonce === "string" ? payload.nonce : undefined;
  return { jkt: await calculateJwkThumbprint(jwk as JWK, "sha256"), jti, iat, nonce, alg: header.alg };
}

/** RFC 9449 section 4.2 `ath`: base64url SHA-256 of the access token's ASCII. */
export function accessTokenHash(accessToken: string): string {
  return createHash("sha256").update(accessToken, "ascii").digest("base64url");
}

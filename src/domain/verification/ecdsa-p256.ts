import type { KeyObject } from "node:crypto";
import { p256 } from "@noble/curves/nist.js";

/**
 * ECDSA verification on P-256 of a digest the caller computed (FIPS 186-4
 * §6.4.2). node:crypto only verifies over a message it hashes itself, so the
 * audited @noble/curves implementation is given the digest as the message
 * with prehashing off; a SHA-384 or SHA-512 digest is truncated to its
 * leftmost 256 bits, as ECDSA prescribes. High-S signatures are valid ECDSA
 * (OpenSSL and cards make them) and are accepted.
 */

export function isP256Key(key: KeyObject): boolean {
  return key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1";
}

/** True when `signature` (DER) is a valid ECDSA signature over `digest` by the P-256 public key. */
export function verifyEcdsaP256Digest(publicKey: KeyObject, digest: Uint8Array, signature: Uint8Array): boolean {
  if (!isP256Key(publicKey)) throw new TypeError("expected a P-256 public key");
  const jwk = publicKey.export({ format: "jwk" });
  const point = Buffer.concat([Buffer.from([0x04]), Buffer.from(jwk.x!, "base64url"), Buffer.from(jwk.y!, "base64url")]);
  try {
    return p256.verify(signature, digest, point, { prehash: false, lowS: false, format: "der" });
  } catch {
    // Not a DER Ecdsa-Sig-Value, or values out of range.
    return false;
  }
}

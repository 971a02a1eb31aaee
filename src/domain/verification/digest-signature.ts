import type { KeyObject } from "node:crypto";
import { isP256Key, verifyEcdsaP256Digest } from "./ecdsa-p256.ts";
import type { HashAlgorithm } from "./hash-algorithm.ts";
import { verifyRsaPkcs1Digest, verifyRsaPssDigest } from "./rsa-signatures.ts";

/** Keys whose signatures Verify can check: RSA (PKCS#1 v1.5 or PSS) and ECDSA on P-256. */
export function isSupportedSigningKey(key: KeyObject): boolean {
  if (key.asymmetricKeyType === "rsa") return (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 1024;
  return isP256Key(key);
}

/**
 * True when `signature` was made over `digest` with the private key of
 * `publicKey`. An RSA signature may be PKCS#1 v1.5 (what JPKI cards make) or
 * PSS: the request does not say which, and each encoding rules out the other.
 */
export function verifyDigestSignature(publicKey: KeyObject, hash: HashAlgorithm, digest: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.asymmetricKeyType === "rsa") {
    return verifyRsaPkcs1Digest(publicKey, hash, digest, signature) || verifyRsaPssDigest(publicKey, hash, digest, signature);
  }
  if (isP256Key(publicKey)) return verifyEcdsaP256Digest(publicKey, digest, signature);
  throw new TypeError(`unsupported key type ${publicKey.asymmetricKeyType ?? "unknown"}`);
}

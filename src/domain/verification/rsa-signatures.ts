import { constants, createHash, publicDecrypt, timingSafeEqual, type KeyObject } from "node:crypto";
import { digestInfoPrefix, digestLength, type HashAlgorithm } from "./hash-algorithm.ts";

/**
 * RSA signature checks over a digest the caller computed. node:crypto's
 * verify hashes the message itself, so the public-key operation is done with
 * publicDecrypt and the encoding is checked here.
 */

function modulusBytes(key: KeyObject): number {
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (!bits) throw new TypeError("expected an RSA public key");
  return Math.ceil(bits / 8);
}

function rsaPublic(key: KeyObject, signature: Uint8Array, padding: number): Buffer | undefined {
  if (signature.length !== modulusBytes(key)) return undefined;
  try {
    return publicDecrypt({ key, padding }, signature);
  } catch {
    // Bad padding, or a signature not below the modulus.
    return undefined;
  }
}

/**
 * RSASSA-PKCS1-v1_5 (RFC 8017 §8.2.2), as the JPKI card signs: OpenSSL checks
 * the type 1 padding, and the recovered DigestInfo must equal, byte for byte,
 * the one this digest encodes to (comparing encodings, not parsing them).
 */
export function verifyRsaPkcs1Digest(key: KeyObject, hash: HashAlgorithm, digest: Uint8Array, signature: Uint8Array): boolean {
  const recovered = rsaPublic(key, signature, constants.RSA_PKCS1_PADDING);
  if (!recovered) return false;
  const expected = Buffer.concat([digestInfoPrefix[hash], digest]);
  return recovered.length === expected.length && timingSafeEqual(recovered, expected);
}

function mgf1(hash: HashAlgorithm, seed: Buffer, length: number): Buffer {
  const blocks: Buffer[] = [];
  for (let counter = 0; blocks.length * digestLength[hash] < length; counter++) {
    const c = Buffer.alloc(4);
    c.writeUInt32BE(counter);
    blocks.push(createHash(hash).update(seed).update(c).digest());
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/**
 * RSASSA-PSS (RFC 8017 §9.1.2, EMSA-PSS-VERIFY) with MGF1 over the same hash
 * and any salt length, recovered from the encoding as OpenSSL's "auto" does.
 */
export function verifyRsaPssDigest(key: KeyObject, hash: HashAlgorithm, digest: Uint8Array, signature: Uint8Array): boolean {
  const recovered = rsaPublic(key, signature, constants.RSA_NO_PADDING);
  if (!recovered) return false;
  const emBits = key.asymmetricKeyDetails!.modulusLength! - 1;
  const emLen = Math.ceil(emBits / 8);
  const hLen = digestLength[hash];
  // With emBits a multiple of 8 the encoded message is one octet shorter than the modulus.
  const leading = recovered.subarray(0, recovered.length - emLen);
  if (leading.some((octet) => octet !== 0)) return false;
  const em = recovered.subarray(recovered.length - emLen);
  if (emLen < hLen + 2 || em[emLen - 1] !== 0xbc) return false;
  const maskedDb = em.subarray(0, emLen - hLen - 1);
  const h = em.subarray(emLen - hLen - 1, emLen - 1);
  const unusedBits = 8 * emLen - emBits;
  const topMask = 0xff >> unusedBits;
  if (maskedDb[0]! & ~topMask & 0xff) return false;
  const db = Buffer.from(maskedDb);
  const mask = mgf1(hash, Buffer.from(h), db.length);
  for (let i = 0; i < db.length; i++) db[i]! ^= mask[i]!;
  db[0]! &= topMask;
  const separator = db.findIndex((octet) => octet !== 0);
  if (separator < 0 || db[separator] !== 0x01) return false;
  const salt = db.subarray(separator + 1);
  const expected = createHash(hash).update(Buffer.alloc(8)).update(digest).update(salt).digest();
  return timingSafeEqual(expected, h);
}

import type { KeyObject } from "node:crypto";
import { DerError, readAll, readTlv, tags } from "../certificates/x509/der.ts";

/**
 * ECDSA verification on P-256 of a digest the caller computed (FIPS 186-4
 * §6.4.2). node:crypto only verifies over a message it hashes itself, so the
 * curve arithmetic is done here with BigInt. Everything handled is public
 * (key, digest, signature), so nothing needs to run in constant time.
 */

const p = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const n = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const b = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;
const gx = 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n;
const gy = 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n;

/** Jacobian coordinates: x = X/Z², y = Y/Z³; Z = 0 is the point at infinity. */
type Point = readonly [bigint, bigint, bigint];
const infinity: Point = [1n, 1n, 0n];

const mod = (a: bigint, m = p): bigint => {
  const r = a % m;
  return r < 0n ? r + m : r;
};

function inverse(a: bigint, m: bigint): bigint {
  let [oldR, r] = [mod(a, m), m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return mod(oldS, m);
}

/** dbl-2001-b, for a = -3. */
function double([x, y, z]: Point): Point {
  if (z === 0n || y === 0n) return infinity;
  const delta = mod(z * z);
  const gamma = mod(y * y);
  const beta = mod(x * gamma);
  const alpha = mod(3n * (x - delta) * (x + delta));
  const x3 = mod(alpha * alpha - 8n * beta);
  const z3 = mod((y + z) * (y + z) - gamma - delta);
  const y3 = mod(alpha * (4n * beta - x3) - 8n * gamma * gamma);
  return [x3, y3, z3];
}

/** add-2007-bl. */
function add(P: Point, Q: Point): Point {
  const [x1, y1, z1] = P;
  const [x2, y2, z2] = Q;
  if (z1 === 0n) return Q;
  if (z2 === 0n) return P;
  const z1z1 = mod(z1 * z1);
  const z2z2 = mod(z2 * z2);
  const u1 = mod(x1 * z2z2);
  const u2 = mod(x2 * z1z1);
  const s1 = mod(y1 * z2 * z2z2);
  const s2 = mod(y2 * z1 * z1z1);
  if (u1 === u2) return s1 === s2 ? double(P) : infinity;
  const h = mod(u2 - u1);
  const i = mod(4n * h * h);
  const j = mod(h * i);
  const r = mod(2n * (s2 - s1));
  const v = mod(u1 * i);
  const x3 = mod(r * r - j - 2n * v);
  const y3 = mod(r * (v - x3) - 2n * s1 * j);
  const z3 = mod(((z1 + z2) * (z1 + z2) - z1z1 - z2z2) * h);
  return [x3, y3, z3];
}

/** u1·G + u2·Q in one pass (Shamir's trick). */
function twoMultiples(u1: bigint, G: Point, u2: bigint, Q: Point): Point {
  const both = add(G, Q);
  let result = infinity;
  for (let bit = 255; bit >= 0; bit--) {
    result = double(result);
    const a = (u1 >> BigInt(bit)) & 1n;
    const c = (u2 >> BigInt(bit)) & 1n;
    if (a && c) result = add(result, both);
    else if (a) result = add(result, G);
    else if (c) result = add(result, Q);
  }
  return result;
}

const toBigInt = (bytes: Uint8Array): bigint => (bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString("hex")}`));

/** A DER INTEGER that must be positive and minimally encoded. */
function positiveInteger(tlv: { tag: number; content: Uint8Array }): bigint {
  const c = tlv.content;
  if (tlv.tag !== 0x02 || c.length === 0) throw new DerError("expected an INTEGER");
  if (c[0]! & 0x80) throw new DerError("negative INTEGER");
  if (c.length > 1 && c[0] === 0 && !(c[1]! & 0x80)) throw new DerError("INTEGER not in its shortest form");
  return toBigInt(c);
}

/** r and s of a DER Ecdsa-Sig-Value, or undefined when it is not one. */
function signatureValues(signature: Uint8Array): [bigint, bigint] | undefined {
  try {
    const sequence = readTlv(signature, 0);
    if (sequence.tag !== tags.sequence || sequence.end !== signature.length) return undefined;
    const items = readAll(sequence.content);
    if (items.length !== 2) return undefined;
    return [positiveInteger(items[0]!), positiveInteger(items[1]!)];
  } catch (error) {
    if (error instanceof DerError) return undefined;
    throw error;
  }
}

export function isP256Key(key: KeyObject): boolean {
  return key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1";
}

/** True when `signature` (DER) is a valid ECDSA signature over `digest` by the P-256 public key. */
export function verifyEcdsaP256Digest(publicKey: KeyObject, digest: Uint8Array, signature: Uint8Array): boolean {
  if (!isP256Key(publicKey)) throw new TypeError("expected a P-256 public key");
  const values = signatureValues(signature);
  if (!values) return false;
  const [r, s] = values;
  if (r < 1n || r >= n || s < 1n || s >= n) return false;
  const jwk = publicKey.export({ format: "jwk" });
  const qx = toBigInt(Buffer.from(jwk.x!, "base64url"));
  const qy = toBigInt(Buffer.from(jwk.y!, "base64url"));
  if (mod(qy * qy - (qx * qx * qx - 3n * qx + b)) !== 0n) return false;
  // The leftmost 256 bits of the digest (a SHA-384 or SHA-512 digest is truncated).
  const e = toBigInt(digest.subarray(0, 32));
  const w = inverse(s, n);
  const point = twoMultiples(mod(e * w, n), [gx, gy, 1n], mod(r * w, n), [qx, qy, 1n]);
  if (point[2] === 0n) return false;
  const zInverse = inverse(point[2], p);
  const x = mod(point[0] * zInverse * zInverse);
  return mod(x, n) === r;
}

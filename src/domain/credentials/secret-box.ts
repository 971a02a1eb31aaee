import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Encryption at rest for secrets the server must read back (TOTP secrets):
 * AES-256-GCM under a 32-byte key, a random 12-byte IV per value, and the
 * result as text, `v1.<iv>.<ciphertext>.<tag>` (unpadded base64url, 16-byte
 * tag). The associated data names what the value belongs to, typically the
 * row's owner such as the user id: opening with any other associated data
 * fails, so a sealed value copied into another row is useless there.
 *
 * With random 96-bit IVs, keep one key below about 2^32 seals (NIST SP 800-38D);
 * one per enrolled factor is far from that.
 */

export const secretBoxKeyBytes = 32;
const version = "v1";
const ivBytes = 12;
const tagBytes = 16;
/** Domain separation: a v1 box's authenticated data is this prefix and then the caller's associated data. */
const associatedDataPrefix = Buffer.from("shomei secret-box v1\0", "utf8");
const part = /^[A-Za-z0-9_-]*$/;

/** Why open refused a sealed value. The message never includes the key or the plaintext. */
export class SecretBoxError extends Error {
  override name = "SecretBoxError";
}

export function seal(key: Uint8Array, plaintext: string | Uint8Array, associatedData: string | Uint8Array): string {
  checkKey(key);
  const iv = randomBytes(ivBytes);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: tagBytes });
  cipher.setAAD(authenticatedData(associatedData));
  const ciphertext = Buffer.concat([cipher.update(toBytes(plaintext)), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [version, iv.toString("base64url"), ciphertext.toString("base64url"), tag.toString("base64url")].join(".");
}

/**
 * The plaintext bytes (`.toString("utf8")` for text). Throws SecretBoxError if
 * the value is malformed or fails authentication: tampered with, sealed under
 * another key, or sealed with other associated data.
 */
export function open(key: Uint8Array, sealed: string, associatedData: string | Uint8Array): Buffer {
  checkKey(key);
  const parts = typeof sealed === "string" ? sealed.split(".") : [];
  if (parts.length !== 4 || parts[0] !== version) {
    throw new SecretBoxError(`sealed value is malformed: expected ${version}.<iv>.<ciphertext>.<tag>`);
  }
  const iv = decodePart(parts[1]!);
  const ciphertext = decodePart(parts[2]!);
  const tag = decodePart(parts[3]!);
  if (iv?.length !== ivBytes || ciphertext === undefined || tag?.length !== tagBytes) {
    throw new SecretBoxError("sealed value is malformed: bad IV, ciphertext or tag encoding");
  }
  const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: tagBytes });
  decipher.setAAD(authenticatedData(associatedData));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    throw new SecretBoxError("sealed value failed authentication: wrong key, wrong associated data, or tampered with");
  }
}

function checkKey(key: Uint8Array): void {
  if (!(key instanceof Uint8Array) || key.length !== secretBoxKeyBytes) {
    throw new TypeError(`secret box key must be ${secretBoxKeyBytes} bytes`);
  }
}

function toBytes(value: string | Uint8Array): Buffer {
  if (typeof value === "string") return Buffer.from(value, "utf8");
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError("expected a string or bytes");
}

function authenticatedData(associatedData: string | Uint8Array): Buffer {
  return Buffer.concat([associatedDataPrefix, toBytes(associatedData)]);
}

/** Canonical unpadded base64url only (Buffer.from alone skips characters it does not know). */
function decodePart(text: string): Buffer | undefined {
  if (!part.test(text)) return undefined;
  const bytes = Buffer.from(text, "base64url");
  return bytes.toString("base64url") === text ? bytes : undefined;
}

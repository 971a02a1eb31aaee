import { hash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * API tokens look like `shm_1a2b3c4d5e6f_<43 characters>`: a public prefix that
 * finds the token (and can be shown in listings) and 256 random bits that prove
 * it. Only the SHA-256 of the whole token is stored; a slow hash adds nothing
 * for 256-bit random secrets.
 */
const prefixPattern = /^shm_[0-9a-f]{12}$/;
const tokenPattern = /^(shm_[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface NewApiToken {
  token: string;
  prefix: string;
  secretHash: string;
}

export function generateApiToken(): NewApiToken {
  const prefix = `shm_${randomBytes(6).toString("hex")}`;
  const token = `${prefix}_${randomBytes(32).toString("base64url")}`;
  return { token, prefix, secretHash: hashApiToken(token) };
}

export function hashApiToken(token: string): string {
  return hash("sha256", token, "hex");
}

/** The prefix of a well-formed token, or undefined. */
export function apiTokenPrefix(token: string): string | undefined {
  return tokenPattern.exec(token)?.[1];
}

export function isApiTokenPrefix(value: string): boolean {
  return prefixPattern.test(value);
}

export function apiTokenMatches(token: string, storedHash: string): boolean {
  // Every authenticated call hashes its token: the one-shot hash, straight to bytes.
  const presented = hash("sha256", token, "buffer");
  const stored = Buffer.from(storedHash, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

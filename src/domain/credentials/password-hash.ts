import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { invalidField } from "../errors.ts";

/**
 * Password hashing with scrypt (RFC 7914), which is memory-hard: N = 2^15,
 * r = 8, p = 1 takes 32 MiB and tens of milliseconds per guess. A hash is
 * stored with its parameters, `scrypt$15$8$1$<salt>$<key>` (log2 N, r, p, then
 * the salt and derived key in unpadded base64url), so the parameters can be
 * raised later: verification reads them from the stored value, and
 * needsRehash tells the caller to store a fresh hash after a successful login.
 *
 * Passwords are normalized to Unicode NFKC (as NIST SP 800-63B suggests), so
 * the same characters typed on different keyboards or systems match, then
 * hashed as UTF-8.
 */

/** The longest password accepted, in UTF-8 bytes after normalization. */
export const maxPasswordBytes = 1024;

interface ScryptParameters {
  logN: number;
  r: number;
  p: number;
}

const current: ScryptParameters = { logN: 15, r: 8, p: 1 };
const saltBytes = 16;
const keyBytes = 32;

/** Bounds on parameters read back, so a corrupt or hostile row cannot demand unbounded memory or time. */
const limits = { logN: 20, r: 32, p: 16, memoryBytes: 256 * 1024 * 1024 };

const decimal = /^[1-9][0-9]{0,2}$/;
const base64url = /^[A-Za-z0-9_-]+$/;

/**
 * Hashes a password for storage. A password longer than maxPasswordBytes is
 * user input to refuse: it raises a DomainError (invalid_field, field
 * "password"). A non-string is a programming error: TypeError.
 */
export async function hashPassword(password: string): Promise<string> {
  const input = passwordBytes(password);
  if (input === undefined) {
    throw invalidField("password", `password must be at most ${maxPasswordBytes} bytes`);
  }
  const salt = randomBytes(saltBytes);
  const key = await derive(input, salt, current, keyBytes);
  return format(current, salt, key);
}

/**
 * Whether the password matches the stored hash. Never throws for a stored value
 * that is malformed or out of bounds (it matches nothing), nor for a password
 * longer than maxPasswordBytes (no stored hash can be of one). A non-string
 * password is a TypeError.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const input = passwordBytes(password);
  const parsed = parse(stored);
  if (input === undefined || parsed === undefined) return false;
  const key = await derive(input, parsed.salt, parsed.params, parsed.key.length);
  return timingSafeEqual(key, parsed.key);
}

/**
 * Whether a stored hash should be replaced (after the password has been
 * verified): it uses other parameters or lengths than new hashes do, or cannot
 * be read at all.
 */
export function needsRehash(stored: string): boolean {
  const parsed = parse(stored);
  return (
    parsed === undefined ||
    parsed.params.logN !== current.logN ||
    parsed.params.r !== current.r ||
    parsed.params.p !== current.p ||
    parsed.salt.length !== saltBytes ||
    parsed.key.length !== keyBytes
  );
}

function passwordBytes(password: string): Buffer | undefined {
  if (typeof password !== "string") throw new TypeError("password must be a string");
  // Refuse absurd input before normalizing it (NFKC can expand text, and composition shrink it only a little).
  if (password.length > 4 * maxPasswordBytes) return undefined;
  const bytes = Buffer.from(password.normalize("NFKC"), "utf8");
  return bytes.length > maxPasswordBytes ? undefined : bytes;
}

function memoryNeeded({ logN, r, p }: ScryptParameters): number {
  // What OpenSSL checks against maxmem: the p blocks of 128 r bytes and the (N + 2) of V.
  return 128 * r * (2 ** logN + p + 2);
}

function derive(password: Buffer, salt: Buffer, params: ScryptParameters, length: number): Promise<Buffer> {
  const options = { N: 2 ** params.logN, r: params.r, p: params.p, maxmem: memoryNeeded(params) + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

function format(params: ScryptParameters, salt: Buffer, key: Buffer): string {
  return ["scrypt", params.logN, params.r, params.p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

function parse(stored: unknown): { params: ScryptParameters; salt: Buffer; key: Buffer } | undefined {
  if (typeof stored !== "string" || stored.length > 512) return undefined;
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return undefined;
  const [, logN, r, p, salt, key] = parts as [string, string, string, string, string, string];
  if (!decimal.test(logN) || !decimal.test(r) || !decimal.test(p)) return undefined;
  const params = { logN: Number(logN), r: Number(r), p: Number(p) };
  if (params.logN > limits.logN || params.r > limits.r || params.p > limits.p) return undefined;
  if (memoryNeeded(params) > limits.memoryBytes) return undefined;
  const saltBuffer = decodeBase64url(salt);
  const keyBuffer = decodeBase64url(key);
  if (saltBuffer === undefined || saltBuffer.length < 8 || saltBuffer.length > 64) return undefined;
  if (keyBuffer === undefined || keyBuffer.length < 16 || keyBuffer.length > 64) return undefined;
  return { params, salt: saltBuffer, key: keyBuffer };
}

/** Strict: only the canonical unpadded encoding (Buffer.from alone skips invalid characters). */
function decodeBase64url(text: string): Buffer | undefined {
  if (!base64url.test(text)) return undefined;
  const bytes = Buffer.from(text, "base64url");
  return bytes.toString("base64url") === text ? bytes : undefined;
}

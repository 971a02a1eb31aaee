import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { base32Decode, base32Encode } from "./base32.ts";

/**
 * Time-based one-time passwords (RFC 6238) as authenticator apps compute them:
 * HMAC-SHA1, a 30-second step counted from the Unix epoch, 6 digits, each
 * code an RFC 4226 HOTP value of the step number.
 *
 * Secrets are passed around in base32 (RFC 4648, unpadded), the form the
 * otpauth:// URI carries. Replay protection belongs to the caller: verifyTotp
 * returns the time step that matched, the caller stores the last step used per
 * user and passes it back as `afterStep` (or refuses a step not above it).
 */

export const totpDigits = 6;
export const totpPeriodSeconds = 30;
/** The secret size generateTotpSecret uses (RFC 4226 recommends 160 bits). */
export const totpSecretBytes = 20;
/** RFC 4226 section 4: the shared secret must be at least 128 bits. */
const minimumSecretBytes = 16;
const maximumWindow = 10;

export interface TotpVerifyOptions {
  /** How many steps before and after the current one to accept as well; 0 to 10, default 1. */
  window?: number;
  /** Accept only steps strictly after this one (the last step this user has used). */
  afterStep?: number;
}

export interface TotpUriOptions {
  /** The service's name as the app should show it, e.g. "Shomei". */
  issuer: string;
  /** The user's account name, e.g. their login. */
  account: string;
}

/** A new random secret, base32 without padding (32 characters). */
export function generateTotpSecret(): string {
  return base32Encode(randomBytes(totpSecretBytes));
}

/**
 * RFC 4226 HOTP: HMAC-SHA1 of the 8-byte big-endian counter, dynamically
 * truncated to 31 bits, the last `digits` decimal digits, zero-padded.
 */
export function hotp(key: Uint8Array, counter: number, digits: number = totpDigits): string {
  if (!Number.isSafeInteger(counter) || counter < 0) throw new RangeError("counter must be a non-negative safe integer");
  if (!Number.isInteger(digits) || digits < 6 || digits > 8) throw new RangeError("digits must be 6, 7 or 8");
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac("sha1", key).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

/** The RFC 6238 time step containing the instant (milliseconds since the epoch). */
export function totpStep(timeMs: number): number {
  if (!Number.isFinite(timeMs) || timeMs < 0) throw new RangeError("time must be a non-negative finite number of milliseconds");
  return Math.floor(timeMs / (totpPeriodSeconds * 1000));
}

/** The 6-digit code for the instant. Throws a TypeError for a malformed secret, a RangeError for a short one. */
export function totpCode(secretBase32: string, timeMs: number): string {
  return hotp(secretKey(secretBase32), totpStep(timeMs));
}

/**
 * The time step whose code the user typed, or null. The code must be exactly
 * six ASCII digits (strip any spaces the user typed before calling). Steps from
 * `window` before to `window` after the current one are tried, all of them,
 * each compared in constant time; if more than one matches, the one nearest
 * the current step wins, the earlier on a tie.
 */
export function verifyTotp(secretBase32: string, code: string, timeMs: number, options: TotpVerifyOptions = {}): number | null {
  const window = options.window ?? 1;
  if (!Number.isInteger(window) || window < 0 || window > maximumWindow) {
    throw new RangeError(`window must be an integer from 0 to ${maximumWindow}`);
  }
  const afterStep = options.afterStep;
  if (afterStep !== undefined && !Number.isSafeInteger(afterStep)) throw new RangeError("afterStep must be a safe integer");
  const key = secretKey(secretBase32);
  const now = totpStep(timeMs);
  if (typeof code !== "string" || !/^[0-9]{6}$/.test(code)) return null;
  const presented = Buffer.from(code, "ascii");

  let matched: number | null = null;
  for (const offset of offsetsNearestFirst(window)) {
    const step = now + offset;
    if (step < 0) continue;
    const equal = timingSafeEqual(Buffer.from(hotp(key, step), "ascii"), presented);
    if (equal && matched === null && (afterStep === undefined || step > afterStep)) matched = step;
  }
  return matched;
}

/**
 * The otpauth:// key URI an authenticator app imports (usually as a QR code):
 * `otpauth://totp/Issuer:account?secret=...&issuer=Issuer&algorithm=SHA1&digits=6&period=30`.
 * Issuer and account must be non-empty and free of colons (the label's separator).
 */
export function totpUri(secretBase32: string, { issuer, account }: TotpUriOptions): string {
  secretKey(secretBase32);
  for (const [name, value] of [["issuer", issuer], ["account", account]] as const) {
    if (typeof value !== "string" || value.length === 0) throw new TypeError(`${name} must be a non-empty string`);
    if (value.includes(":")) throw new RangeError(`${name} must not contain a colon`);
  }
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = [
    `secret=${secretBase32.replace(/=+$/, "").toUpperCase()}`,
    `issuer=${encodeURIComponent(issuer)}`,
    "algorithm=SHA1",
    `digits=${totpDigits}`,
    `period=${totpPeriodSeconds}`,
  ].join("&");
  return `otpauth://totp/${label}?${query}`;
}

function secretKey(secretBase32: string): Buffer {
  if (typeof secretBase32 !== "string") throw new TypeError("TOTP secret must be a base32 string");
  const key = base32Decode(secretBase32);
  if (key.length < minimumSecretBytes) throw new RangeError(`TOTP secret must be at least ${minimumSecretBytes} bytes`);
  return key;
}

/** 0, -1, +1, -2, +2, ... */
function offsetsNearestFirst(window: number): number[] {
  const offsets = [0];
  for (let i = 1; i <= window; i++) offsets.push(-i, i);
  return offsets;
}

import { randomFillSync, randomUUID } from "node:crypto";

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}

export function newId(): string {
  return randomUUID();
}

/** Random bytes drawn 4 KiB at a time: one call into OpenSSL per 256 ids rather than one per id, as randomUUID does. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/**
 * A UUID version 7 (RFC 9562 §5.7): 48 bits of `now` in milliseconds, then
 * 74 random bits. For rows that are only ever appended (status records,
 * verifications, sign-in attempts): ids made one after another sort one
 * after another, so a new row's key lands at the end of the primary-key
 * index instead of on a random page of it, which makes a batch of 1,000
 * records touch a few index pages rather than hundreds. Use it only where
 * the creation time is no secret: it can be read back from the id.
 */
export function newTimeOrderedId(now: number): string {
  if (poolOffset + 16 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const at = poolOffset;
  poolOffset += 16;
  // The bytes are used once: the time and version bits are written over the random ones in place.
  pool.writeUIntBE(Math.max(0, Math.floor(now)) % 2 ** 48, at, 6);
  pool[at + 6] = (pool[at + 6]! & 0x0f) | 0x70;
  pool[at + 8] = (pool[at + 8]! & 0x3f) | 0x80;
  const hex = pool.toString("hex", at, at + 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Canonical (lowercase) form, so an id matches whatever case the caller used. */
export function canonicalUuid(value: string): string {
  return value.toLowerCase();
}

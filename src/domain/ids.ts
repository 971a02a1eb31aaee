import { randomUUID } from "node:crypto";
import { fromRandomBytes } from "./random-pool.ts";

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}

export function newId(): string {
  return randomUUID();
}

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
  const hex = fromRandomBytes(16, (bytes, at) => {
    // The time and version bits are written over random ones: these bytes are ours alone.
    bytes.writeUIntBE(Math.max(0, Math.floor(now)) % 2 ** 48, at, 6);
    bytes[at + 6] = (bytes[at + 6]! & 0x0f) | 0x70;
    bytes[at + 8] = (bytes[at + 8]! & 0x3f) | 0x80;
    return bytes.toString("hex", at, at + 16);
  });
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Canonical (lowercase) form, so an id matches whatever case the caller used. */
export function canonicalUuid(value: string): string {
  return value.toLowerCase();
}

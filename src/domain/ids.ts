import { randomUUID } from "node:crypto";

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}

export function newId(): string {
  return randomUUID();
}

/** Canonical (lowercase) form, so an id matches whatever case the caller used. */
export function canonicalUuid(value: string): string {
  return value.toLowerCase();
}

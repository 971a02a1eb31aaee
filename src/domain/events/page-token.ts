import { DomainError } from "../errors.ts";
import { jsonNestingWithin } from "../json-nesting.ts";
import type { EventFilter } from "./model.ts";

/**
 * Opaque to clients, as the other listings' tokens: base64url of the last
 * event's position and the filter listed. A token from another listing
 * (another filter) is refused.
 */
function filterKey(filter: EventFilter): string {
  return `${filter.certificateId ?? ""}/${filter.type ?? ""}`;
}

export function encodeEventPageToken(filter: EventFilter, seq: number): string {
  return Buffer.from(JSON.stringify({ f: filterKey(filter), s: seq })).toString("base64url");
}

export function decodeEventPageToken(filter: EventFilter, token: string): number {
  try {
    const text = Buffer.from(token, "base64url");
    // Our tokens nest one level; a deeply nested forgery is refused before JSON.parse spends time on it.
    if (!jsonNestingWithin(text, 1)) throw new TypeError("not a page token");
    const value = JSON.parse(text.toString("utf8")) as { f?: unknown; s?: unknown };
    if (value.f === filterKey(filter) && Number.isSafeInteger(value.s)) return value.s as number;
  } catch {
    // fall through to the error below
  }
  throw new DomainError("invalid_page_token", "page_token is not a token from a previous page of this listing", "page_token");
}

import type { VerificationCursor, VerificationFilter } from "./verification-store.ts";
import { DomainError } from "../errors.ts";
import { jsonNestingWithin } from "../json-nesting.ts";

/**
 * Opaque to clients: base64url of the last verification's position and the
 * filter listed. A token from another listing (another filter) is refused.
 */
function filterKey(filter: VerificationFilter): string {
  return `${filter.userId ?? ""}/${filter.certificateId ?? ""}`;
}

export function encodeVerificationPageToken(filter: VerificationFilter, cursor: VerificationCursor): string {
  return Buffer.from(JSON.stringify({ f: filterKey(filter), t: cursor.createdAt, i: cursor.id })).toString("base64url");
}

export function decodeVerificationPageToken(filter: VerificationFilter, token: string): VerificationCursor {
  try {
    const text = Buffer.from(token, "base64url");
    // Our tokens nest one level; a deeply nested forgery is refused before JSON.parse spends time on it.
    if (!jsonNestingWithin(text, 1)) throw new TypeError("not a page token");
    const value = JSON.parse(text.toString("utf8")) as { f?: unknown; t?: unknown; i?: unknown };
    if (value.f === filterKey(filter) && Number.isSafeInteger(value.t) && typeof value.i === "string") {
      return { createdAt: value.t as number, id: value.i };
    }
  } catch {
    // fall through to the error below
  }
  throw new DomainError("invalid_page_token", "page_token is not a token from a previous page of this listing", "page_token");
}

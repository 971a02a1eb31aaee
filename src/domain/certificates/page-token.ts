import type { StatusCursor } from "./certificate-store.ts";
import { DomainError } from "../errors.ts";
import { jsonNestingWithin } from "../json-nesting.ts";

/**
 * Page tokens are opaque to clients: base64url of the last record's position
 * and the certificate listed. A token from another listing is refused rather
 * than silently starting somewhere else. Tampering gains nothing: every read is
 * still filtered by account and certificate.
 */
export function encodePageToken(certificateId: string, cursor: StatusCursor): string {
  return Buffer.from(JSON.stringify({ c: certificateId, t: cursor.createdAt, i: cursor.id })).toString("base64url");
}

export function decodePageToken(certificateId: string, token: string): StatusCursor {
  try {
    const text = Buffer.from(token, "base64url");
    // Our tokens nest one level; a deeply nested forgery is refused before JSON.parse spends time on it.
    if (!jsonNestingWithin(text, 1)) throw new TypeError("not a page token");
    const value = JSON.parse(text.toString("utf8")) as { c?: unknown; t?: unknown; i?: unknown };
    if (value.c === certificateId && Number.isSafeInteger(value.t) && typeof value.i === "string") {
      return { createdAt: value.t as number, id: value.i };
    }
  } catch {
    // fall through to the error below
  }
  throw new DomainError("invalid_page_token", "page_token is not a token from a previous page of this listing", "page_token");
}

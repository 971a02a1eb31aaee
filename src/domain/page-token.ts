import { DomainError } from "./errors.ts";
import { jsonNestingWithin } from "./json-nesting.ts";

/** Where a page ended, newest first: the last item's time (or sequence number) and, where times can tie, its id. */
export interface PagePosition {
  at: number;
  id?: string;
}

/**
 * Page tokens are opaque to clients: base64url of where the last page ended
 * and of the listing it belongs to (`listing`: what was listed, such as the
 * filter). A token from another listing is refused rather than silently
 * starting somewhere else. Tampering gains nothing: every read is still
 * filtered by account.
 */
export function encodePageToken(listing: string, position: PagePosition): string {
  return Buffer.from(JSON.stringify({ f: listing, t: position.at, ...(position.id === undefined ? {} : { i: position.id }) })).toString("base64url");
}

/** The position a token of this listing holds; invalid_page_token (field page_token) for anything else. */
export function decodePageToken(listing: string, token: string, withId: boolean): PagePosition {
  try {
    const text = Buffer.from(token, "base64url");
    // Our tokens nest one level; a deeply nested forgery is refused before JSON.parse spends time on it.
    if (!jsonNestingWithin(text, 1)) throw new TypeError("not a page token");
    const value = JSON.parse(text.toString("utf8")) as { f?: unknown; t?: unknown; i?: unknown };
    if (value.f === listing && Number.isSafeInteger(value.t) && (withId ? typeof value.i === "string" : value.i === undefined)) {
      return { at: value.t as number, ...(withId ? { id: value.i as string } : {}) };
    }
  } catch {
    // fall through to the error below
  }
  throw new DomainError("invalid_page_token", "page_token is not a token from a previous page of this listing", "page_token");
}

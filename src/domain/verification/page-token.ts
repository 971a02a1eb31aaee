import type { VerificationCursor, VerificationFilter } from "./verification-store.ts";
import { decodePageToken, encodePageToken } from "../page-token.ts";

/** Verifications, page by page: the listing is the filter. */
function filterKey(filter: VerificationFilter): string {
  return `${filter.userId ?? ""}/${filter.certificateId ?? ""}`;
}

export function encodeVerificationPageToken(filter: VerificationFilter, cursor: VerificationCursor): string {
  return encodePageToken(filterKey(filter), { at: cursor.createdAt, id: cursor.id });
}

export function decodeVerificationPageToken(filter: VerificationFilter, token: string): VerificationCursor {
  const { at, id } = decodePageToken(filterKey(filter), token, true);
  return { createdAt: at, id: id! };
}

import { decodePageToken, encodePageToken } from "../page-token.ts";
import type { EventFilter } from "./model.ts";

/** Events, page by page, by their sequence number: the listing is the filter. */
function filterKey(filter: EventFilter): string {
  return `${filter.certificateId ?? ""}/${filter.type ?? ""}`;
}

export function encodeEventPageToken(filter: EventFilter, seq: number): string {
  return encodePageToken(filterKey(filter), { at: seq });
}

export function decodeEventPageToken(filter: EventFilter, token: string): number {
  return decodePageToken(filterKey(filter), token, false).at;
}

import type { FetchLimits } from "../fetch-limits.ts";
import { urlSchemeTest } from "../url-schemes.ts";

/** What the copy held already carries, for a conditional request. */
export interface CrlValidators {
  etag?: string | undefined;
  lastModified?: string | undefined;
}

export type CrlFetchLimits = FetchLimits;

export type CrlFetchResult =
  | { kind: "not_modified" }
  | { kind: "fetched"; der: Uint8Array; etag: string | undefined; lastModified: string | undefined };

/** Fetches a list from its URL; throws CrlFetchError. A 304 is only possible when validators were sent. */
export type CrlFetcher = (url: string, validators: CrlValidators, limits: CrlFetchLimits) => Promise<CrlFetchResult>;

export class CrlFetchError extends Error {
  override name = "CrlFetchError";
}

/** The URL schemes lists are fetched from. */
export const isFetchableCrlUrl = urlSchemeTest(["http:", "https:", "file:"]);

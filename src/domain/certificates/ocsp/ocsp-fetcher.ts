import type { FetchLimits } from "../fetch-limits.ts";
import { urlSchemeTest } from "../url-schemes.ts";

/** Sends one DER OCSPRequest to a responder and returns the DER it answers; throws OcspFetchError. */
export type OcspFetcher = (url: string, request: Uint8Array, limits: FetchLimits) => Promise<Uint8Array>;

export class OcspFetchError extends Error {
  override name = "OcspFetchError";
}

/** The URL schemes responders are asked over (RFC 6960 Appendix A: HTTP). */
export const isOcspUrl = urlSchemeTest(["http:", "https:"]);

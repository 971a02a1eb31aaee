import { discard, readBody, send, type FetchLimits } from "../limited-fetch.ts";
import { urlSchemeTest } from "../url-schemes.ts";

/** Sends one DER OCSPRequest to a responder and returns the DER it answers; throws OcspFetchError. */
export type OcspFetcher = (url: string, request: Uint8Array, limits: FetchLimits) => Promise<Uint8Array>;

export class OcspFetchError extends Error {
  override name = "OcspFetchError";
}

/** RFC 5019 §5: GET when the base64 of the request is shorter than 255 bytes. */
const maxGetEncodedLength = 254;

/** The URL schemes responders are asked over (RFC 6960 Appendix A: HTTP). */
export const isOcspUrl = urlSchemeTest(["http:", "https:"]);

/**
 * RFC 6960 Appendix A over HTTP: a short request as GET (url/base64, which
 * caches and proxies can answer), a longer one (a nonce can make it so) as
 * POST application/ocsp-request. 200 only; one deadline for the exchange,
 * body included, and a size limit.
 */
export const fetchOcsp: OcspFetcher = async (url, request, limits) => {
  const fail = (message: string) => new OcspFetchError(message);
  if (!isOcspUrl(url)) throw fail(`${url}: only http: and https: responders are asked`);
  const encoded = Buffer.from(request).toString("base64");
  const get = encoded.length <= maxGetEncodedLength;
  const target = get ? `${url.replace(/\/+$/, "")}/${encodeURIComponent(encoded)}` : url;
  const accept = { accept: "application/ocsp-response" };
  const exchange = await send(
    target,
    get ? { headers: accept } : { method: "POST", headers: { ...accept, "content-type": "application/ocsp-request" }, body: request },
    limits,
    (message) => fail(message.replace(target, url)),
  );
  if (exchange.response.status !== 200) {
    await discard(exchange.response);
    throw fail(`${url}: HTTP ${exchange.response.status}`);
  }
  return readBody(url, exchange, limits, "the response", fail);
};

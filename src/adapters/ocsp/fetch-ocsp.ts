import { isOcspUrl, OcspFetchError, type OcspFetcher } from "../../domain/certificates/ocsp/ocsp-fetcher.ts";
import { discard, readBody, send } from "../http/limited-fetch.ts";

/** RFC 5019 §5: GET when the base64 of the request is shorter than 255 bytes. */
const maxGetEncodedLength = 254;

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

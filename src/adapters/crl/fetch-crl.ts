import { readFile, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { CrlFetchError, isFetchableCrlUrl, type CrlFetcher, type CrlFetchLimits, type CrlFetchResult, type CrlValidators } from "../../domain/certificates/crl/crl-fetcher.ts";
import { describeFetchError, discard, readBody, send } from "../http/limited-fetch.ts";

const pemCrl = /^\s*-----BEGIN X509 CRL-----([\s\S]+?)-----END X509 CRL-----/;

/** RFC 5280 says DER; a PEM list (some servers publish one) is accepted too. */
function derOf(bytes: Uint8Array): Uint8Array {
  if (bytes[0] !== 0x2d && bytes[0] !== 0x20 && bytes[0] !== 0x0a) return bytes;
  const body = pemCrl.exec(Buffer.from(bytes).toString("latin1"))?.[1];
  return body ? Buffer.from(body.replace(/\s/g, ""), "base64") : bytes;
}

function tooLarge(url: string, maxBytes: number): CrlFetchError {
  return new CrlFetchError(`${url}: the list is larger than the limit of ${maxBytes} bytes`);
}

const fail = (message: string) => new CrlFetchError(message);

async function fetchHttp(url: string, validators: CrlValidators, limits: CrlFetchLimits): Promise<CrlFetchResult> {
  const headers: Record<string, string> = { accept: "application/pkix-crl, application/octet-stream;q=0.9, */*;q=0.1" };
  if (validators.etag) headers["if-none-match"] = validators.etag;
  if (validators.lastModified) headers["if-modified-since"] = validators.lastModified;
  const exchange = await send(url, { headers }, limits, fail);
  const { response } = exchange;
  if (response.status === 304 && (validators.etag || validators.lastModified)) {
    await discard(response);
    return { kind: "not_modified" };
  }
  if (response.status !== 200) {
    await discard(response);
    throw new CrlFetchError(`${url}: HTTP ${response.status}`);
  }
  const body = await readBody(url, exchange, limits, "the list", fail);
  return {
    kind: "fetched",
    der: derOf(body),
    etag: response.headers.get("etag") ?? undefined,
    lastModified: response.headers.get("last-modified") ?? undefined,
  };
}

/** A file's validator is its modification time and size, kept where an ETag would be. */
async function fetchFile(url: string, validators: CrlValidators, limits: CrlFetchLimits): Promise<CrlFetchResult> {
  const file = fileURLToPath(url);
  try {
    const info = await stat(file);
    const tag = `"${info.mtimeMs}-${info.size}"`;
    if (validators.etag === tag) return { kind: "not_modified" };
    if (info.size > limits.maxBytes) throw tooLarge(url, limits.maxBytes);
    const bytes = await readFile(file);
    if (bytes.length > limits.maxBytes) throw tooLarge(url, limits.maxBytes);
    return { kind: "fetched", der: derOf(bytes), etag: tag, lastModified: info.mtime.toUTCString() };
  } catch (error) {
    if (error instanceof CrlFetchError) throw error;
    throw new CrlFetchError(`${url}: ${describeFetchError(error)}`);
  }
}

/** http:, https: and file: lists, with a timeout, a size limit and conditional requests. */
export const fetchCrl: CrlFetcher = (url, validators, limits) => {
  if (!isFetchableCrlUrl(url)) return Promise.reject(new CrlFetchError(`${url}: only http:, https: and file: URLs are fetched`));
  return new URL(url).protocol === "file:" ? fetchFile(url, validators, limits) : fetchHttp(url, validators, limits);
};

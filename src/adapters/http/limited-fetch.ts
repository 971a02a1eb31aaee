/**
 * HTTP exchanges with revocation sources (CRL distribution points, OCSP
 * responders): one deadline for the whole exchange, body included, and a
 * size limit checked against Content-Length and while reading. A server that
 * trickles bytes is as stuck as a silent one, and one that sends more than
 * the limit is not read to the end.
 */
import type { FetchLimits } from "../../domain/certificates/fetch-limits.ts";
import { copyInSlices } from "../copy-in-slices.ts";

/** Makes the caller's error from a message that already names the URL. */
export type FetchFailure = (message: string) => Error;

export interface Exchange {
  response: Response;
  signal: AbortSignal;
}

/** Sends the request; throws fail(…) when no response arrives within the deadline or the connection fails. */
export async function send(url: string, init: RequestInit, limits: FetchLimits, fail: FetchFailure): Promise<Exchange> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  try {
    return { response: await fetch(url, { ...init, signal }), signal };
  } catch (error) {
    throw fail(`${url}: ${signal.aborted ? `no answer within ${limits.timeoutMs} ms` : describeFetchError(error)}`);
  }
}

/** Drops a body that will not be read, so the connection is released. */
export async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

/** Reads the whole body within the exchange's deadline and the size limit; `what` names it in messages ("the list"). */
export async function readBody(url: string, exchange: Exchange, limits: FetchLimits, what: string, fail: FetchFailure): Promise<Buffer> {
  const { response, signal } = exchange;
  const tooLarge = () => fail(`${url}: ${what} is larger than the limit of ${limits.maxBytes} bytes`);
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > limits.maxBytes) {
    await discard(response);
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of response.body ?? []) {
      total += chunk.length;
      if (total > limits.maxBytes) {
        await discard(response);
        throw tooLarge();
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (total > limits.maxBytes) throw error;
    throw fail(`${url}: ${signal.aborted ? `the body did not arrive within ${limits.timeoutMs} ms` : describeFetchError(error)}`);
  }
  // Joined a few megabytes at a time: one Buffer.concat of a 49 MB list held the event loop 131 ms on a slow machine.
  const body = Buffer.allocUnsafe(total);
  await copyInSlices(chunks, body);
  return body;
}

/** The most telling part of a network error: its code (ECONNREFUSED…) rather than fetch's generic "fetch failed". */
export function describeFetchError(error: unknown): string {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  return e?.cause?.code ?? e?.code ?? e?.cause?.message ?? e?.message ?? String(error);
}

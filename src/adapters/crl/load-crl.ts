import { setImmediate } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { CrlIndex } from "../../domain/certificates/crl/crl-index.ts";
import type { CrlWorkerReply, CrlWorkerRequest } from "./crl-worker-protocol.ts";
import { indexCrl, type IndexedCrl } from "../../domain/certificates/crl/index-crl.ts";
import { CrlRejectedError, type CrlLoader, type VerifiedCrl } from "../../domain/certificates/crl/verified-crl.ts";

/** Larger lists are refused before any work: about 13 million entries, far beyond any list JPKI publishes. */
export const maxCrlBytes = 512 * 1024 * 1024;
/**
 * Lists up to this size are read on the calling thread: a few thousand
 * entries take a few milliseconds, less than handing them to a worker.
 */
export const inlineCrlBytes = 64 * 1024;

/**
 * Parses, verifies and indexes a DER CRL (see CrlLoader). Lists larger than
 * inlineCrlBytes go to a worker thread, so loading a list of millions of
 * entries never holds the event loop: the only work left on it is one copy of
 * the input (the caller keeps its buffer) and wrapping the index, whose
 * typed arrays come back transferred, not copied.
 *
 * Throws CrlRejectedError for a list that is refused, TypeError for an issuer
 * certificate that cannot be read, and Error if the worker itself fails.
 */
export const loadCrl: CrlLoader = async (der, issuerCertificateDer) => {
  if (der.length > maxCrlBytes) throw new CrlRejectedError("too_large", `the list is ${der.length} bytes, more than the ${maxCrlBytes} accepted`);
  if (der.length <= inlineCrlBytes) return verifiedCrl(await indexCrl(der, issuerCertificateDer));
  return verifiedCrl(await crlWorker.index(der, issuerCertificateDer));
};

function verifiedCrl(crl: IndexedCrl): VerifiedCrl {
  const index = new CrlIndex(crl.tables);
  return {
    thisUpdate: crl.thisUpdate,
    nextUpdate: crl.nextUpdate,
    crlNumber: crl.crlNumber,
    issuingDistributionPoint: crl.issuingDistributionPoint,
    expiredCertsOnCrl: crl.expiredCertsOnCrl,
    sha256: crl.sha256,
    entries: index.entries,
    indexBytes: index.bytes,
    lookup: (serialHex) => index.lookup(serialHex),
  };
}

interface Pending {
  resolve: (crl: IndexedCrl) => void;
  reject: (error: Error) => void;
}

/**
 * One worker thread, started on first use and kept for later lists; it does
 * not keep the process alive while idle. Lists are indexed one at a time in
 * the order they arrive. If the thread dies, the lists it held fail and the
 * next list starts a new one.
 */
class CrlWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  async index(der: Uint8Array, issuer: Uint8Array): Promise<IndexedCrl> {
    const copy = await copyInSlices(der);
    const worker = this.start();
    const id = this.nextId++;
    const request: CrlWorkerRequest = { id, der: copy.buffer, issuer: new Uint8Array(issuer) };
    return new Promise<IndexedCrl>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage(request, [copy.buffer]);
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./crl-worker.mjs", import.meta.url));
    worker.on("message", (reply: CrlWorkerReply) => this.settle(reply));
    worker.on("error", (error) => this.stop(worker, error));
    worker.on("exit", (code) => this.stop(worker, new Error(`the CRL worker exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private settle(reply: CrlWorkerReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.ok) pending.resolve(reply.crl);
    else if (reply.kind === "rejected") pending.reject(new CrlRejectedError(reply.rejection, reply.message));
    else if (reply.kind === "type") pending.reject(new TypeError(reply.message));
    else pending.reject(new Error(`indexing the CRL failed: ${reply.message}`));
  }

  private stop(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const { reject } of pending) reject(new Error(`the CRL worker stopped: ${error.message}`));
  }
}

const crlWorker = new CrlWorker();

/** Copying 40 MB at once holds the event loop for 20–30 ms; in 4 MB slices, a couple of milliseconds at a time. */
const copySlice = 4 * 1024 * 1024;

async function copyInSlices(source: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const copy = new Uint8Array(new ArrayBuffer(source.length));
  for (let offset = 0; offset < source.length; offset += copySlice) {
    if (offset > 0) await setImmediate();
    copy.set(source.subarray(offset, offset + copySlice), offset);
  }
  return copy;
}

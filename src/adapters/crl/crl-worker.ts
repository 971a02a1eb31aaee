import { parentPort } from "node:worker_threads";
import { diffSerialTables } from "../../domain/certificates/crl/crl-diff.ts";
import type { SerialTable } from "../../domain/certificates/crl/serial-table.ts";
import { indexCrl } from "../../domain/certificates/crl/index-crl.ts";
import { CrlRejectedError } from "../../domain/certificates/crl/verified-crl.ts";
import type { CrlWorkerReply, CrlWorkerRequest } from "./crl-worker-protocol.ts";

/**
 * The worker thread's body: parses, verifies and indexes each list it is
 * sent, and diffs two lists' indexes. An index goes back in
 * SharedArrayBuffers: the main thread answers lookups from it, and a later
 * diff reads it here again without a copy either way.
 */
const port = parentPort;
if (!port) throw new Error("crl-worker.ts runs only as a worker thread");

async function answer(request: CrlWorkerRequest): Promise<void> {
  let reply: CrlWorkerReply;
  let transfer: ArrayBuffer[] = [];
  try {
    if (request.kind === "input") {
      const input = touchedBuffer(request.bytes);
      reply = { id: request.id, ok: true, input };
      transfer = [input];
    } else if (request.kind === "diff") {
      reply = { id: request.id, ok: true, changes: diffSerialTables(request.previous, request.next) };
    } else {
      const crl = await indexCrl(new Uint8Array(request.der), request.issuer);
      reply = { id: request.id, ok: true, crl: { ...crl, tables: crl.tables.map(shared) } };
    }
  } catch (error) {
    if (error instanceof CrlRejectedError) reply = { id: request.id, ok: false, kind: "rejected", rejection: error.rejection, message: error.message };
    else if (error instanceof TypeError) reply = { id: request.id, ok: false, kind: "type", message: error.message };
    else reply = { id: request.id, ok: false, kind: "internal", message: error instanceof Error ? error.message : String(error) };
  }
  port!.postMessage(reply, transfer);
}

/**
 * A buffer whose every page has been written once. The operating system
 * commits a new buffer's pages on first write, and on some machines that costs
 * about 10 ms per 4 MB: paid here, the main thread's copy of a list into the
 * buffer runs at memory speed (a fraction of a millisecond per 4 MB) instead of
 * holding the event loop for a tenth of a second per list. Not shared: Web
 * Crypto's digest, which hashes the list, refuses shared memory.
 */
function touchedBuffer(bytes: number): ArrayBuffer {
  const buffer = new ArrayBuffer(bytes);
  new Uint8Array(buffer).fill(0);
  return buffer;
}

function shared(table: SerialTable): SerialTable {
  return { ...table, keys: copy(table.keys), times: copy(table.times), reasons: copy(table.reasons), directory: copy(table.directory) };
}

function copy<T extends Uint32Array | Uint8Array>(array: T): T {
  const into = new (array.constructor as new (buffer: SharedArrayBuffer) => T)(new SharedArrayBuffer(array.byteLength));
  into.set(array);
  return into;
}

// answer() catches every failure of the work itself; a failure to post the reply ends the worker, which the loader reports.
port.on("message", (request: CrlWorkerRequest) => void answer(request));

import { parentPort } from "node:worker_threads";
import { indexCrl } from "../../domain/certificates/crl/index-crl.ts";
import { CrlRejectedError } from "../../domain/certificates/crl/verified-crl.ts";
import type { CrlWorkerReply, CrlWorkerRequest } from "./crl-worker-protocol.ts";

/**
 * The worker thread's body: parses, verifies and indexes each list it is
 * sent, and sends the index back with its typed arrays' buffers transferred,
 * not copied.
 */
const port = parentPort;
if (!port) throw new Error("crl-worker.ts runs only as a worker thread");

async function answer(request: CrlWorkerRequest): Promise<void> {
  let reply: CrlWorkerReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const crl = await indexCrl(new Uint8Array(request.der), request.issuer);
    reply = { id: request.id, ok: true, crl };
    transfer = crl.tables.flatMap((table) => [table.keys.buffer, table.times.buffer, table.reasons.buffer, table.directory.buffer] as ArrayBuffer[]);
  } catch (error) {
    if (error instanceof CrlRejectedError) reply = { id: request.id, ok: false, kind: "rejected", rejection: error.rejection, message: error.message };
    else if (error instanceof TypeError) reply = { id: request.id, ok: false, kind: "type", message: error.message };
    else reply = { id: request.id, ok: false, kind: "internal", message: error instanceof Error ? error.message : String(error) };
  }
  port!.postMessage(reply, transfer);
}

// answer() catches every failure of the work itself; a failure to post the reply ends the worker, which the loader reports.
port.on("message", (request: CrlWorkerRequest) => void answer(request));

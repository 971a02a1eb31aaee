import { Worker } from "node:worker_threads";
import { CrlRejectedError } from "../../domain/certificates/crl/verified-crl.ts";
import type { CrlWorkerReply, CrlWorkerRequest } from "./crl-worker-protocol.ts";

type Request = CrlWorkerRequest extends infer R ? (R extends CrlWorkerRequest ? Omit<R, "id"> : never) : never;
type Success = Extract<CrlWorkerReply, { ok: true }>;

interface Pending {
  resolve: (reply: Success) => void;
  reject: (error: Error) => void;
}

/**
 * One worker thread for the large lists' work (indexing, diffing), started
 * on first use and kept for later lists; it does not keep the process alive
 * while idle. Requests are answered one at a time in the order they arrive.
 * If the thread dies, the requests it held fail and the next one starts a
 * new thread.
 */
class CrlWorkerThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  ask(request: Request, transfer: ArrayBuffer[] = []): Promise<Success> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<Success>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ ...request, id }, transfer);
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
    if (reply.ok) pending.resolve(reply);
    else if (reply.kind === "rejected") pending.reject(new CrlRejectedError(reply.rejection, reply.message));
    else if (reply.kind === "type") pending.reject(new TypeError(reply.message));
    else pending.reject(new Error(`the CRL worker failed: ${reply.message}`));
  }

  private stop(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const { reject } of pending) reject(new Error(`the CRL worker stopped: ${error.message}`));
  }
}

export const crlWorkerThread = new CrlWorkerThread();

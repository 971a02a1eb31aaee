import type { SerialChange } from "../../domain/certificates/crl/crl-diff.ts";
import type { SerialTable } from "../../domain/certificates/crl/serial-table.ts";
import type { IndexedCrl } from "../../domain/certificates/crl/index-crl.ts";
import type { CrlRejection } from "../../domain/certificates/crl/verified-crl.ts";

/**
 * What the CRL worker is asked: for a buffer to take a list's bytes (made
 * ready by the worker, transferred), to index a list (in such a buffer,
 * transferred back, with the issuer certificate), or to diff two lists'
 * tables (shared, not copied: the worker builds them in SharedArrayBuffers).
 */
export type CrlWorkerRequest =
  | { id: number; kind: "input"; bytes: number }
  | { id: number; kind: "index"; der: ArrayBuffer; issuer: Uint8Array }
  | { id: number; kind: "diff"; previous: readonly SerialTable[]; next: readonly SerialTable[] };

export type CrlWorkerReply =
  | { id: number; ok: true; input: ArrayBuffer }
  | { id: number; ok: true; crl: IndexedCrl }
  | { id: number; ok: true; changes: SerialChange[] }
  /** rejected: CrlRejectedError; type: the caller's mistake (TypeError); internal: anything else. */
  | { id: number; ok: false; kind: "rejected"; rejection: CrlRejection; message: string }
  | { id: number; ok: false; kind: "type" | "internal"; message: string };

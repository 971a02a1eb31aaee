import type { IndexedCrl } from "../../domain/certificates/crl/index-crl.ts";
import type { CrlRejection } from "../../domain/certificates/crl/verified-crl.ts";

/** What the loader sends the CRL worker: the list's bytes (transferred) and the issuer certificate. */
export interface CrlWorkerRequest {
  id: number;
  der: ArrayBuffer;
  issuer: Uint8Array;
}

export type CrlWorkerReply =
  | { id: number; ok: true; crl: IndexedCrl }
  /** rejected: CrlRejectedError; type: the caller's mistake (TypeError); internal: anything else. */
  | { id: number; ok: false; kind: "rejected"; rejection: CrlRejection; message: string }
  | { id: number; ok: false; kind: "type" | "internal"; message: string };

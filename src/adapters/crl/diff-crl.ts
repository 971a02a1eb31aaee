import { diffSerialTables, type CrlDiffer } from "../../domain/certificates/crl/crl-diff.ts";
import { crlWorkerThread } from "./crl-worker-thread.ts";

/**
 * Lists up to this many entries together are diffed on the calling thread
 * (a few milliseconds); larger ones in the worker thread, which reads the
 * tables it built, shared, and sends back only the changes.
 */
export const inlineDiffEntries = 100_000;

/** The serials added to and removed from a list (see diffSerialTables), off the event loop for large lists. */
export const diffCrls: CrlDiffer = async (previous, next) => {
  if (previous.entries + next.entries <= inlineDiffEntries) return diffSerialTables(previous.tables, next.tables);
  const reply = await crlWorkerThread.ask({ kind: "diff", previous: previous.tables, next: next.tables });
  if (!("changes" in reply)) throw new Error("the CRL worker answered a diff request with something else");
  return reply.changes;
};

import { CrlIndex } from "../../domain/certificates/crl/crl-index.ts";
import { copyInSlices } from "../copy-in-slices.ts";
import { crlWorkerThread } from "./crl-worker-thread.ts";
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
 * the input (the caller keeps its buffer) into a buffer the worker made ready,
 * and wrapping the index, whose typed arrays come back shared, not copied.
 *
 * Throws CrlRejectedError for a list that is refused, TypeError for an issuer
 * certificate that cannot be read, and Error if the worker itself fails.
 */
export const loadCrl: CrlLoader = async (der, issuerCertificateDer) => {
  if (der.length > maxCrlBytes) throw new CrlRejectedError("too_large", `the list is ${der.length} bytes, more than the ${maxCrlBytes} accepted`);
  if (der.length <= inlineCrlBytes) return verifiedCrl(await indexCrl(der, issuerCertificateDer));
  return verifiedCrl(await indexInWorker(der, issuerCertificateDer));
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
    tables: index.tables,
    lookup: (serialHex) => index.lookup(serialHex),
  };
}

/**
 * Hands a large list to the worker thread: its bytes copied (the caller keeps
 * its buffer), in slices, into a buffer the worker made ready and transferred
 * here, which goes back transferred too.
 */
async function indexInWorker(der: Uint8Array, issuer: Uint8Array): Promise<IndexedCrl> {
  const made = await crlWorkerThread.ask({ kind: "input", bytes: der.length });
  if (!("input" in made)) throw new Error("the CRL worker answered a buffer request with something else");
  await copyInSlices([der], new Uint8Array(made.input));
  const reply = await crlWorkerThread.ask({ kind: "index", der: made.input, issuer: new Uint8Array(issuer) }, [made.input]);
  if (!("crl" in reply)) throw new Error("the CRL worker answered an index request with something else");
  return reply.crl;
}

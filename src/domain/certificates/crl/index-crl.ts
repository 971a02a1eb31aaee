import { webcrypto } from "node:crypto";
import type { SerialTable } from "./serial-table.ts";
import { CrlIndexBuilder } from "./crl-index-builder.ts";
import { verifyCrlSignature } from "./crl-signature.ts";
import { readCrlIssuer } from "./issuer-certificate.ts";
import { readCrlStructure, readRevokedEntries } from "./read-crl.ts";
import { CrlRejectedError, type IssuingDistributionPoint } from "./verified-crl.ts";
import { sameBytes } from "../same-bytes.ts";

/** A verified list as plain data: what the worker sends back (the tables' buffers are transferred, not copied). */
export interface IndexedCrl {
  thisUpdate: number;
  nextUpdate: number | undefined;
  crlNumber: bigint | undefined;
  issuingDistributionPoint: IssuingDistributionPoint | undefined;
  expiredCertsOnCrl: number | undefined;
  sha256: string;
  tables: SerialTable[];
}

/**
 * Parses, verifies and indexes a list (the loader runs this in a worker
 * thread for large lists). Checks in order: structure and list extensions,
 * issuer name, the issuer's keyUsage, the signature over the raw tbsCertList,
 * then the entries; a list with a tampered entry is reported as a bad
 * signature. The two hashes over the whole input (the signature's and the
 * list's SHA-256) run on libuv's thread pool while this thread walks the
 * entries.
 */
export async function indexCrl(der: Uint8Array, issuerCertificateDer: Uint8Array): Promise<IndexedCrl> {
  const issuer = readCrlIssuer(issuerCertificateDer);
  const crl = readCrlStructure(der);
  if (!sameBytes(crl.issuer, issuer.subject)) {
    throw new CrlRejectedError("issuer_mismatch", "the list's issuer name is not the issuer certificate's subject");
  }
  if (issuer.allowsCrlSign === false) {
    throw new CrlRejectedError("issuer_cannot_sign_crls", "the issuer certificate's keyUsage does not allow cRLSign");
  }
  const signature = settled(verifyCrlSignature(crl.tbsCertList, crl.signatureAlgorithm, crl.signature, issuer.publicKey));
  const digest = settled(webcrypto.subtle.digest("SHA-256", der));
  let tables: SerialTable[] | undefined;
  let entriesError: unknown;
  try {
    const builder = new CrlIndexBuilder();
    readRevokedEntries(der, crl, builder);
    tables = builder.build();
  } catch (error) {
    entriesError = error;
  }
  const [signed, hashed] = await Promise.all([signature, digest]);
  if (!signed.ok) throw signed.error;
  if (!tables) throw entriesError;
  if (!hashed.ok) throw hashed.error;
  return {
    thisUpdate: crl.thisUpdate * 1000,
    nextUpdate: crl.nextUpdate === undefined ? undefined : crl.nextUpdate * 1000,
    crlNumber: crl.crlNumber,
    issuingDistributionPoint: crl.issuingDistributionPoint,
    expiredCertsOnCrl: crl.expiredCertsOnCrl === undefined ? undefined : crl.expiredCertsOnCrl * 1000,
    sha256: Buffer.from(hashed.value).toString("hex"),
    tables,
  };
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Runs alongside the entry walk; its failure is looked at only once the walk is done. */
function settled<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}


import { createPrivateKey } from "node:crypto";
import { readCrlIssuer } from "../certificates/crl/issuer-certificate.ts";
import { writeCrl, type CrlEntryToWrite } from "../certificates/crl/write-crl.ts";
import { invalidField } from "../errors.ts";
import { loadMockCa, type MockCaMaterial } from "./ca-material.ts";
import { isRevocationReason, revocationReasonCode, type RevocationReason } from "./revocation-reason.ts";
import { normalizeSerialNumberHex } from "../certificates/x509/serial-number.ts";
import { isEncodableTime, truncateToSeconds } from "./validity.ts";

export interface MockCrlEntry {
  serialNumberHex: string;
  revokedAt: Date;
  reason: RevocationReason;
}

export interface CreateMockCrlInput {
  entries: readonly MockCrlEntry[];
  thisUpdate: Date;
  nextUpdate: Date;
  /** The cRLNumber extension: a non-negative integer that grows with each CRL the CA issues. */
  crlNumber: number;
}

/**
 * A v2 CRL signed by the mock CA with sha256WithRSAEncryption, returned as
 * DER, written by the service's own CRL writer (one buffer, one signature: a
 * list of a hundred thousand entries takes well under a second). CRL
 * extensions: authorityKeyIdentifier (the CA's subject key identifier) and
 * cRLNumber, both non-critical. Each entry carries the serial, the revocation
 * date and a non-critical reasonCode extension, for "unspecified" (0) too:
 * RFC 5280 §5.3.1 prefers no reasonCode for unspecified, and readers must
 * treat a missing one as unspecified, but an explicit code says the same and
 * keeps every entry alike. Entries are written in the order given. An empty
 * entry list gives a valid CRL without revokedCertificates.
 *
 * Throws DomainError "invalid_field" for input it cannot encode.
 */
export async function createMockCrl(ca: MockCaMaterial, input: CreateMockCrlInput): Promise<Uint8Array> {
  if (!isEncodableTime(input.thisUpdate)) throw invalidField("this_update", "this_update must be a valid date between 1950 and 9999");
  if (!isEncodableTime(input.nextUpdate)) throw invalidField("next_update", "next_update must be a valid date between 1950 and 9999");
  const thisUpdate = truncateToSeconds(input.thisUpdate);
  const nextUpdate = truncateToSeconds(input.nextUpdate);
  if (nextUpdate.getTime() <= thisUpdate.getTime()) throw invalidField("next_update", "next_update must be later than this_update");
  if (!Number.isSafeInteger(input.crlNumber) || input.crlNumber < 0) {
    throw invalidField("crl_number", "crl_number must be a non-negative integer");
  }

  const seen = new Set<string>();
  const entries = input.entries.map((entry): CrlEntryToWrite => {
    const serialNumber = normalizeSerialNumberHex(entry.serialNumberHex);
    if (!serialNumber) throw invalidField("entries", `serial number ${entry.serialNumberHex} is not a positive hexadecimal integer of at most 20 octets`);
    if (seen.has(serialNumber)) throw invalidField("entries", `serial number ${serialNumber} is listed twice`);
    seen.add(serialNumber);
    if (!isEncodableTime(entry.revokedAt)) throw invalidField("entries", `revocation date of ${serialNumber} must be a valid date between 1950 and 9999`);
    if (!isRevocationReason(entry.reason)) throw invalidField("entries", `reason of ${serialNumber} is not an RFC 5280 CRLReason`);
    return { serialNumberHex: serialNumber, revokedAt: truncateToSeconds(entry.revokedAt).getTime(), reason: revocationReasonCode(entry.reason) };
  });

  const authority = await loadMockCa(ca);
  const keyId = authority.authorityKeyIdentifier.keyId;
  if (!keyId) throw new Error("mock CA authority key identifier has no key identifier");
  return writeCrl({
    issuerName: readCrlIssuer(new Uint8Array(authority.certificate.rawData)).subject,
    signingKey: createPrivateKey(ca.privateKeyPem),
    hash: "sha256",
    thisUpdate: thisUpdate.getTime(),
    nextUpdate: nextUpdate.getTime(),
    crlNumber: BigInt(input.crlNumber),
    authorityKeyId: Buffer.from(keyId, "hex"),
    entries,
  });
}

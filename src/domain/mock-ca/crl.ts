import { invalidField } from "../errors.ts";
import { loadMockCa, type MockCaMaterial } from "./ca-material.ts";
import { derEnumerated, derInteger } from "./der.ts";
import { rsaSigningAlgorithm } from "./keys.ts";
import { crlNumberOid, crlReasonOid } from "./oids.ts";
import { isRevocationReason, revocationReasonCode, type RevocationReason } from "./revocation-reason.ts";
import { normalizeSerialNumberHex } from "./serial-number.ts";
import { isEncodableTime, truncateToSeconds } from "./validity.ts";
import { webcrypto, x509 } from "./x509-runtime.ts";

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
 * DER. CRL extensions: authorityKeyIdentifier (the CA's subject key
 * identifier) and cRLNumber, both non-critical. Each entry carries the
 * serial, the revocation date and a non-critical reasonCode extension, for
 * "unspecified" (0) too. RFC 5280 §5.3.1 prefers no reasonCode for
 * unspecified, but @peculiar/x509 then writes an empty crlEntryExtensions
 * SEQUENCE, which breaks Extensions ::= SEQUENCE SIZE (1..MAX); an explicit
 * unspecified is valid DER and means the same to readers, who must still treat
 * a missing reasonCode (in CRLs from elsewhere) as unspecified.
 * An empty entry list gives a valid CRL without revokedCertificates.
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
  const entries = input.entries.map((entry): x509.X509CrlEntryParams => {
    const serialNumber = normalizeSerialNumberHex(entry.serialNumberHex);
    if (!serialNumber) throw invalidField("entries", `serial number ${entry.serialNumberHex} is not a positive hexadecimal integer of at most 20 octets`);
    if (seen.has(serialNumber)) throw invalidField("entries", `serial number ${serialNumber} is listed twice`);
    seen.add(serialNumber);
    if (!isEncodableTime(entry.revokedAt)) throw invalidField("entries", `revocation date of ${serialNumber} must be a valid date between 1950 and 9999`);
    if (!isRevocationReason(entry.reason)) throw invalidField("entries", `reason of ${serialNumber} is not an RFC 5280 CRLReason`);
    return {
      serialNumber,
      revocationDate: truncateToSeconds(entry.revokedAt),
      extensions: [new x509.Extension(crlReasonOid, false, derEnumerated(revocationReasonCode(entry.reason)))],
    };
  });

  const authority = await loadMockCa(ca);
  const crl = await x509.X509CrlGenerator.create(
    {
      issuer: authority.certificate.subjectName,
      thisUpdate,
      nextUpdate,
      signingAlgorithm: rsaSigningAlgorithm,
      signingKey: authority.signingKey,
      extensions: [authority.authorityKeyIdentifier, new x509.Extension(crlNumberOid, false, derInteger(BigInt(input.crlNumber)))],
      entries,
    },
    webcrypto,
  );
  return new Uint8Array(crl.rawData);
}

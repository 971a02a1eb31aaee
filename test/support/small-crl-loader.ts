import { createHash } from "node:crypto";
import { AsnConvert } from "@peculiar/asn1-schema";
import { IssuingDistributionPoint as AsnIdp } from "@peculiar/asn1-x509";
import { x509 } from "../../src/domain/mock-ca/x509-runtime.ts";
import { isRevocationReasonCode } from "../../src/domain/certificates/model.ts";
import {
  CrlRejectedError,
  type CrlEntry,
  type CrlLoader,
  type IssuingDistributionPoint,
} from "../../src/domain/certificates/crl/verified-crl.ts";
import { normalizeSerialNumberHex } from "../../src/domain/mock-ca/serial-number.ts";

/**
 * A CrlLoader for tests only: @peculiar/x509 reads small lists well (it cannot
 * read large ones, which is why the service has a streaming loader of its
 * own). It keeps the loader's contract faithfully, so the revocation source's
 * tests exercise real openssl-made lists: issuer name and signature, cRLSign,
 * unknown critical extensions, delta lists, reason codes, crlNumber and the
 * issuingDistributionPoint.
 */

const known = new Set([
  "2.5.29.20", // cRLNumber
  "2.5.29.28", // issuingDistributionPoint
  "2.5.29.35", // authorityKeyIdentifier
  "2.5.29.18", // issuerAltName
  "2.5.29.46", // freshestCRL
  "1.3.6.1.5.5.7.1.1", // authorityInfoAccess
]);
const knownEntry = new Set(["2.5.29.21", "2.5.29.24", "2.5.29.29"]); // reasonCode, invalidityDate, certificateIssuer
const deltaIndicator = "2.5.29.27";

function idpOf(crl: x509.X509Crl): IssuingDistributionPoint | undefined {
  const extension = crl.extensions.find((e) => e.type === "2.5.29.28");
  if (!extension) return undefined;
  const idp = AsnConvert.parse(extension.value, AsnIdp);
  return {
    uris: (idp.distributionPoint?.fullName ?? []).flatMap((n) => (n.uniformResourceIdentifier ? [n.uniformResourceIdentifier] : [])),
    onlyContainsUserCerts: idp.onlyContainsUserCerts,
    onlyContainsCACerts: idp.onlyContainsCACerts,
    onlySomeReasons: idp.onlySomeReasons !== undefined,
    indirectCRL: idp.indirectCRL,
    onlyContainsAttributeCerts: idp.onlyContainsAttributeCerts,
  };
}

export const smallCrlLoader: CrlLoader = async (der, issuerDer) => {
  let crl: x509.X509Crl;
  try {
    crl = new x509.X509Crl(der);
  } catch (error) {
    throw new CrlRejectedError("malformed", `not a DER CRL: ${(error as Error).message}`);
  }
  const issuer = new x509.X509Certificate(issuerDer);
  if (crl.issuerName.toString() !== issuer.subjectName.toString()) {
    throw new CrlRejectedError("issuer_mismatch", "the list's issuer is not the anchor");
  }
  const usage = issuer.getExtension(x509.KeyUsagesExtension);
  if (usage && !(usage.usages & x509.KeyUsageFlags.cRLSign)) throw new CrlRejectedError("issuer_cannot_sign_crls", "the issuer's keyUsage lacks cRLSign");
  let valid = false;
  try {
    valid = await crl.verify({ publicKey: issuer.publicKey });
  } catch {
    valid = false;
  }
  if (!valid) throw new CrlRejectedError("signature_invalid", "the issuer's key does not verify the list");
  for (const e of crl.extensions) {
    if (e.type === deltaIndicator) throw new CrlRejectedError("delta_crl_unsupported", "delta lists are not supported");
    if (e.critical && !known.has(e.type)) throw new CrlRejectedError("unknown_critical_extension", `unknown critical extension ${e.type}`);
  }
  const index = new Map<string, CrlEntry>();
  for (const entry of crl.entries) {
    for (const e of entry.extensions) {
      if (e.critical && !knownEntry.has(e.type)) throw new CrlRejectedError("unknown_critical_extension", `unknown critical entry extension ${e.type}`);
    }
    const reason = entry.reason ?? 0;
    if (reason === 8) continue; // removeFromCRL: only delta lists carry it
    if (!isRevocationReasonCode(reason)) throw new CrlRejectedError("malformed", `reason code ${reason}`);
    const serial = normalizeSerialNumberHex(entry.serialNumber);
    if (!serial) throw new CrlRejectedError("malformed", `serial number ${entry.serialNumber}`);
    index.set(serial, { revokedAt: entry.revocationDate.getTime(), reason });
  }
  const number = crl.extensions.find((e) => e.type === "2.5.29.20");
  return {
    thisUpdate: crl.thisUpdate.getTime(),
    nextUpdate: crl.nextUpdate?.getTime(),
    crlNumber: number ? BigInt(`0x${Buffer.from(number.value).subarray(2).toString("hex") || "0"}`) : undefined,
    issuingDistributionPoint: idpOf(crl),
    sha256: createHash("sha256").update(der).digest("hex"),
    entries: index.size,
    indexBytes: index.size * 64,
    lookup: (serialHex) => index.get(serialHex),
  };
};

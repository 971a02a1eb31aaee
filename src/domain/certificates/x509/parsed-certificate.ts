import { X509Certificate as NodeCertificate, type KeyObject } from "node:crypto";
import { invalidField } from "../../errors.ts";
import { sha256FingerprintHex } from "../../mock-ca/fingerprint.ts";
import { normalizeSerialNumberHex } from "../../mock-ca/serial-number.ts";
import { x509 } from "../../mock-ca/x509-runtime.ts";
import { DerError, readPolicyOids } from "./der.ts";
import { readOtherNames, subjectAltNameOid, type OtherNameText } from "./subject-alt-name.ts";

export type KeyUsage = "digitalSignature" | "nonRepudiation" | "keyEncipherment" | "dataEncipherment" | "keyAgreement" | "keyCertSign" | "cRLSign" | "encipherOnly" | "decipherOnly";
const keyUsageNames: KeyUsage[] = ["digitalSignature", "nonRepudiation", "keyEncipherment", "dataEncipherment", "keyAgreement", "keyCertSign", "cRLSign", "encipherOnly", "decipherOnly"];

const certificatePoliciesOid = "2.5.29.32";

/** What shomei reads from a certificate given to it. */
export interface ParsedCertificate {
  der: Uint8Array;
  /** Node's parser: chain checks and the public key. */
  native: NodeCertificate;
  publicKey: KeyObject;
  serialNumber: string;
  issuer: string;
  notBefore: number;
  notAfter: number;
  fingerprintSha256: string;
  isCa: boolean;
  policyOids: string[];
  /** undefined when the certificate has no keyUsage extension. */
  keyUsages: KeyUsage[] | undefined;
  crlDistributionPoints: string[];
  ocspUrls: string[];
  otherNames: OtherNameText[];
}

/**
 * Parses a DER certificate; throws DomainError invalid_field (field
 * "certificate") when it is not one. Nothing here says whether it is trusted.
 */
export function parseCertificate(der: Uint8Array): ParsedCertificate {
  if (der.length === 0) throw invalidField("certificate", "certificate is required");
  let native: NodeCertificate;
  let parsed: x509.X509Certificate;
  try {
    native = new NodeCertificate(der);
    parsed = new x509.X509Certificate(der);
  } catch {
    throw invalidField("certificate", "certificate is not a DER-encoded X.509 certificate");
  }
  // Node accepts PEM too, and trailing bytes after the DER certificate are not part of it.
  if (!Buffer.from(native.raw).equals(Buffer.from(der))) {
    throw invalidField("certificate", "certificate must be exactly one DER-encoded X.509 certificate");
  }
  let otherNames: OtherNameText[] = [];
  const san = parsed.getExtension(subjectAltNameOid);
  if (san) {
    try {
      otherNames = readOtherNames(new Uint8Array(san.value));
    } catch (error) {
      if (error instanceof DerError) throw invalidField("certificate", `certificate has a malformed subjectAltName: ${error.message}`);
      throw error;
    }
  }
  const keyUsage = parsed.getExtension(x509.KeyUsagesExtension);
  // Read here rather than by @peculiar/x509, which loses the digits of a 128-bit arc (2.25.<uuid>).
  let policyOids: string[] = [];
  const policies = parsed.getExtension(certificatePoliciesOid);
  if (policies) {
    try {
      policyOids = readPolicyOids(new Uint8Array(policies.value));
    } catch (error) {
      if (error instanceof DerError) throw invalidField("certificate", `certificate has malformed certificatePolicies: ${error.message}`);
      throw error;
    }
  }
  const crlDp = parsed.getExtension(x509.CRLDistributionPointsExtension);
  const aia = parsed.getExtension(x509.AuthorityInfoAccessExtension);
  return {
    der,
    native,
    publicKey: native.publicKey,
    serialNumber: normalizeSerialNumberHex(native.serialNumber) ?? native.serialNumber.toLowerCase(),
    issuer: parsed.issuer,
    notBefore: parsed.notBefore.getTime(),
    notAfter: parsed.notAfter.getTime(),
    fingerprintSha256: sha256FingerprintHex(der),
    isCa: native.ca,
    policyOids,
    keyUsages: keyUsage ? keyUsageNames.filter((name) => keyUsage.usages & x509.KeyUsageFlags[name]) : undefined,
    crlDistributionPoints: (crlDp?.distributionPoints ?? []).flatMap((point) =>
      (point.distributionPoint?.fullName ?? []).flatMap((name) => (name.uniformResourceIdentifier ? [name.uniformResourceIdentifier] : [])),
    ),
    ocspUrls: (aia?.ocsp ?? []).flatMap((name) => (name.type === "url" ? [name.value] : [])),
    otherNames,
  };
}

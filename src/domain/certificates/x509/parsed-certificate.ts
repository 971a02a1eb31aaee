import { X509Certificate as NodeCertificate, type KeyObject } from "node:crypto";
import { DamagedInputError, invalidField } from "../../errors.ts";
import { DerError, readPolicyOids } from "./der.ts";
import { extensionOids, readCrlDistributionPointUris, readIsCa, readKeyUsage, readOcspUris, type KeyUsage } from "./extensions.ts";
import { sha256FingerprintHex } from "./fingerprint.ts";
import { RecentlyParsed } from "./recently-parsed.ts";
import { normalizeSerialNumberHex } from "./serial-number.ts";
import { readOtherNames, type OtherNameText } from "./subject-alt-name.ts";
import { readTbsFields } from "./tbs-certificate.ts";

export type { KeyUsage } from "./extensions.ts";

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
  policyOids: readonly string[];
  /** undefined when the certificate has no keyUsage extension. */
  keyUsages: readonly KeyUsage[] | undefined;
  crlDistributionPoints: readonly string[];
  ocspUrls: readonly string[];
  otherNames: readonly OtherNameText[];
}

/**
 * Certificates parsed lately, by fingerprint: a signing back end verifies
 * signature after signature by the same few certificates, and a parse costs
 * far more than the SHA-256 that finds it again. Bounded, least recently used
 * first out; what it holds is immutable.
 */
const recentlyParsed = new RecentlyParsed<ParsedCertificate>(1024);

/**
 * Parses a DER certificate; throws DomainError invalid_field (field
 * "certificate") when it is not one. Nothing here says whether it is trusted.
 *
 * This is the boundary between outside bytes and the domain: any failure of
 * any parser below (node:crypto's, the DER readers') becomes that field
 * error, never an internal one, so a damaged certificate can neither answer
 * 500 nor write a stack trace to the log.
 */
export function parseCertificate(der: Uint8Array): ParsedCertificate {
  if (der.length === 0) throw invalidField("certificate", "certificate is required");
  const fingerprintSha256 = sha256FingerprintHex(der);
  const known = recentlyParsed.get(fingerprintSha256);
  if (known) return known;
  let native: NodeCertificate;
  try {
    native = new NodeCertificate(der);
  } catch {
    throw invalidField("certificate", "certificate is not a DER-encoded X.509 certificate");
  }
  // Node accepts PEM too, and trailing bytes after the DER certificate are not part of it.
  if (!Buffer.from(native.raw).equals(Buffer.from(der))) {
    throw invalidField("certificate", "certificate must be exactly one DER-encoded X.509 certificate");
  }
  let parsed: ParsedCertificate;
  try {
    parsed = Object.freeze(readFields(der, native, fingerprintSha256));
  } catch (error) {
    throw new DamagedInputError("certificate", `certificate is damaged: ${describe(error)}`);
  }
  recentlyParsed.set(fingerprintSha256, parsed);
  return parsed;
}

function readFields(der: Uint8Array, native: NodeCertificate, fingerprintSha256: string): ParsedCertificate {
  const publicKey = attempt("its subjectPublicKeyInfo cannot be read", () => native.publicKey);
  const tbs = attempt("its structure is malformed", () => readTbsFields(der));
  const extension = <T>(oid: string, name: string, read: (value: Uint8Array) => T): T | undefined => {
    const value = tbs.extensions.get(oid);
    return value === undefined ? undefined : attempt(`its ${name} extension is malformed`, () => read(value));
  };
  return {
    der,
    native,
    publicKey,
    // RFC 5280 asks CAs for positive serials of at most 20 octets; one that is not is still named, as node prints it.
    serialNumber: normalizeSerialNumberHex(native.serialNumber) ?? native.serialNumber.toLowerCase(),
    issuer: tbs.issuer,
    notBefore: tbs.notBefore,
    notAfter: tbs.notAfter,
    fingerprintSha256,
    isCa: extension(extensionOids.basicConstraints, "basicConstraints", readIsCa) ?? false,
    policyOids: Object.freeze(extension(extensionOids.certificatePolicies, "certificatePolicies", readPolicyOids) ?? []),
    keyUsages: freezeOptional(extension(extensionOids.keyUsage, "keyUsage", readKeyUsage)),
    crlDistributionPoints: Object.freeze(extension(extensionOids.crlDistributionPoints, "cRLDistributionPoints", readCrlDistributionPointUris) ?? []),
    ocspUrls: Object.freeze(extension(extensionOids.authorityInfoAccess, "authorityInfoAccess", readOcspUris) ?? []),
    otherNames: Object.freeze(extension(extensionOids.subjectAltName, "subjectAltName", readOtherNames) ?? []),
  };
}

/** Which part of a certificate could not be read, with the DER reader's words (node's and OpenSSL's stay out of answers). */
class FieldReadError extends Error {
  constructor(step: string, cause?: unknown) {
    super(cause instanceof DerError ? `${step} (${cause.message})` : step);
  }
}

/** What `read` returns, or a FieldReadError naming the step that failed. */
function attempt<T>(step: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new FieldReadError(step, error);
  }
}

function freezeOptional<T>(items: T[] | undefined): readonly T[] | undefined {
  return items && Object.freeze(items);
}

function describe(error: unknown): string {
  return error instanceof FieldReadError ? error.message : "it cannot be read";
}

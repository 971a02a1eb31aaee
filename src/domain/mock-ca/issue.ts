import { invalidField } from "../errors.ts";
import { loadMockCa, type MockCaMaterial } from "./ca-material.ts";
import { isCertificateKind, keyUsageFlags, profileFor, type CertificateKind } from "./certificate-kind.ts";
import { sha256FingerprintHex } from "../certificates/x509/fingerprint.ts";
import { encodeOtherNames, subjectAltNameOid } from "../certificates/x509/subject-alt-name.ts";
import { jpkiFactEntries, type JpkiFacts } from "../certificates/jpki-facts.ts";
import { generateKeyPair, privateKeyToPem, rsaSigningAlgorithm, type MockKeyAlgorithm } from "./keys.ts";
import { distinguishedName, maxCommonNameLength } from "./names.ts";
import { normalizeSerialNumberHex } from "../certificates/x509/serial-number.ts";
import { randomSerialNumberHex } from "./serial-number.ts";
import { addUtcYears, isEncodableTime, truncateToSeconds } from "./validity.ts";
import { webcrypto, x509 } from "./x509-runtime.ts";

export interface IssueMockCertificateInput {
  kind: CertificateKind;
  subjectCommonName: string;
  /** Hex; a random 127-bit serial when absent. Returned in canonical form (see normalizeSerialNumberHex). */
  serialNumberHex?: string;
  notBefore: Date;
  /** Defaults to notBefore plus the kind's validity, but never past the CA certificate's notAfter. */
  notAfter?: Date;
  crlDistributionPointUrl: string;
  /** The OCSP responder URL written into authorityInfoAccess; none when absent. */
  ocspUrl?: string;
  /** The holder's facts; only signature certificates carry them (as subjectAltName otherName entries). */
  facts?: JpkiFacts;
  /** RSA 2048 unless told otherwise. */
  keyAlgorithm?: MockKeyAlgorithm;
}

export interface IssuedCertificate {
  certificatePem: string;
  /** PKCS#8 PEM of the end-entity key: the mock hands it to the developer, a card never would. */
  privateKeyPem: string;
  serialNumberHex: string;
  sha256FingerprintHex: string;
  /** As written in the certificate (whole seconds). */
  notBefore: Date;
  notAfter: Date;
  kind: CertificateKind;
}

/**
 * Issues an end-entity certificate of a kind from the mock CA: a fresh RSA
 * 2048 (or, when asked, P-256) key, sha256WithRSAEncryption, subject C=JP, CN=<subjectCommonName>, and
 * the extensions
 * - keyUsage (critical): the kind's usages,
 * - certificatePolicies (critical, as in the J-LIS profile): the kind's policy,
 * - subjectAltName: the holder's facts as otherName entries under
 *   1.2.392.200149.8.5.5 (signature certificates only, as JPKI writes them),
 * - cRLDistributionPoints: the given URL,
 * - authorityInfoAccess: the OCSP URL, when given,
 * - authorityKeyIdentifier: the CA's subject key identifier,
 * - subjectKeyIdentifier,
 * - basicConstraints (critical): CA:FALSE.
 *
 * Throws DomainError "invalid_field" for input it cannot issue from.
 */
export async function issueMockCertificate(ca: MockCaMaterial, input: IssueMockCertificateInput): Promise<IssuedCertificate> {
  if (!isCertificateKind(input.kind)) throw invalidField("kind", "kind is not a known certificate kind");
  const profile = profileFor(input.kind);

  const commonName = input.subjectCommonName;
  if (commonName.trim().length === 0 || commonName.length > maxCommonNameLength) {
    throw invalidField("subject_common_name", `subject_common_name must be 1 to ${maxCommonNameLength} characters`);
  }
  let serialNumberHex: string;
  if (input.serialNumberHex === undefined) {
    serialNumberHex = randomSerialNumberHex();
  } else {
    const normalized = normalizeSerialNumberHex(input.serialNumberHex);
    if (!normalized) throw invalidField("serial_number_hex", "serial_number_hex must be a positive hexadecimal integer of at most 20 octets");
    serialNumberHex = normalized;
  }
  if (input.facts && !profile.carriesFacts) throw invalidField("facts", "user authentication certificates carry no personal facts");
  if (input.ocspUrl !== undefined && !URL.canParse(input.ocspUrl)) throw invalidField("ocsp_url", "ocsp_url must be an absolute URL");
  if (!URL.canParse(input.crlDistributionPointUrl)) {
    throw invalidField("crl_distribution_point_url", "crl_distribution_point_url must be an absolute URL");
  }
  if (!isEncodableTime(input.notBefore)) throw invalidField("not_before", "not_before must be a valid date between 1950 and 9999");
  if (input.notAfter !== undefined && !isEncodableTime(input.notAfter)) {
    throw invalidField("not_after", "not_after must be a valid date between 1950 and 9999");
  }

  const authority = await loadMockCa(ca);
  const notBefore = truncateToSeconds(input.notBefore);
  const notAfter = truncateToSeconds(input.notAfter ?? earliest(addUtcYears(notBefore, profile.validityYears), authority.certificate.notAfter));
  if (notAfter.getTime() <= notBefore.getTime()) {
    throw invalidField("not_after", "not_after must be later than not_before (and, by default, the mock CA must still be valid then)");
  }

  const keys = await generateKeyPair(input.keyAlgorithm ?? "rsa_2048");
  const factEntries = input.facts ? jpkiFactEntries(input.facts) : [];
  const certificate = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serialNumberHex,
      subject: distinguishedName(commonName),
      issuer: authority.certificate.subjectName,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: authority.signingKey,
      signingAlgorithm: rsaSigningAlgorithm,
      extensions: [
        new x509.KeyUsagesExtension(keyUsageFlags(profile.keyUsages), true),
        new x509.CertificatePolicyExtension([profile.policyOid], true),
        ...(factEntries.length ? [new x509.Extension(subjectAltNameOid, false, encodeOtherNames(factEntries))] : []),
        new x509.CRLDistributionPointsExtension([input.crlDistributionPointUrl], false),
        ...(input.ocspUrl ? [new x509.AuthorityInfoAccessExtension({ ocsp: [input.ocspUrl] }, false)] : []),
        authority.authorityKeyIdentifier,
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
        new x509.BasicConstraintsExtension(false, undefined, true),
      ],
    },
    webcrypto,
  );

  return {
    certificatePem: certificate.toString("pem"),
    privateKeyPem: await privateKeyToPem(keys.privateKey),
    serialNumberHex,
    sha256FingerprintHex: sha256FingerprintHex(certificate.rawData),
    notBefore: certificate.notBefore,
    notAfter: certificate.notAfter,
    kind: input.kind,
  };
}

function earliest(a: Date, b: Date): Date {
  return a.getTime() <= b.getTime() ? a : b;
}

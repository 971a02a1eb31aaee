import type { MockCaMaterial } from "./ca-material.ts";
import { loadMockCa } from "./ca-material.ts";
import { generateRsaKeyPair, privateKeyToPem, rsaSigningAlgorithm } from "./keys.ts";
import { distinguishedName } from "./names.ts";
import { mockCaOrganization } from "./ca.ts";
import { randomSerialNumberHex } from "./serial-number.ts";
import { truncateToSeconds } from "./validity.ts";
import { webcrypto, x509 } from "./x509-runtime.ts";

/** id-pkix-ocsp-nocheck (RFC 6960 §4.2.2.2.1): clients need not check the responder certificate's own status. */
const ocspNoCheckOid = "1.3.6.1.5.5.7.48.1.5";
const derNull = new Uint8Array([0x05, 0x00]).buffer;
/** A year; renewed when less than a month is left (see MockEnvironment.ocspResponder). */
export const responderValidityMs = 365 * 24 * 60 * 60 * 1000;
export const responderRenewBeforeMs = 30 * 24 * 60 * 60 * 1000;

/**
 * A delegated OCSP responder certificate (RFC 6960 §4.2.2.2) issued by the
 * mock CA: a fresh RSA 2048 key, subject C=JP, O=shomei mock environment,
 * CN=shomei Mock OCSP Responder; extendedKeyUsage id-kp-OCSPSigning,
 * keyUsage digitalSignature (critical), basicConstraints CA:FALSE (critical),
 * id-pkix-ocsp-nocheck, the CA's authority key identifier. The CA's own key
 * then signs certificates and CRLs only, as a real CA keeps it.
 */
export async function issueOcspResponderCertificate(ca: MockCaMaterial, now: Date): Promise<MockCaMaterial> {
  const authority = await loadMockCa(ca);
  const notBefore = truncateToSeconds(new Date(now.getTime() - 60_000));
  const notAfter = new Date(Math.min(notBefore.getTime() + responderValidityMs, authority.certificate.notAfter.getTime()));
  const keys = await generateRsaKeyPair();
  const certificate = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerialNumberHex(),
      subject: distinguishedName("shomei Mock OCSP Responder", mockCaOrganization),
      issuer: authority.certificate.subjectName,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: authority.signingKey,
      signingAlgorithm: rsaSigningAlgorithm,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.ocspSigning], false),
        new x509.Extension(ocspNoCheckOid, false, derNull),
        authority.authorityKeyIdentifier,
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );
  return { certificatePem: certificate.toString("pem"), privateKeyPem: await privateKeyToPem(keys.privateKey) };
}

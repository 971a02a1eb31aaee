import type { MockCaMaterial } from "./ca-material.ts";
import { generateRsaKeyPair, privateKeyToPem, rsaSigningAlgorithm } from "./keys.ts";
import { distinguishedName, maxCommonNameLength } from "./names.ts";
import { randomSerialNumberHex } from "./serial-number.ts";
import { addUtcYears, isEncodableTime, truncateToSeconds } from "./validity.ts";
import { webcrypto, x509 } from "./x509-runtime.ts";

export const defaultMockCaCommonName = "shomei Mock JPKI CA";
/** Says in every certificate's issuer that this is not J-LIS. */
export const mockCaOrganization = "shomei mock environment";
/** Long enough to outlive every certificate it issues for years (end-entity certificates run five at most). */
export const mockCaValidityYears = 20;

export interface CreateMockCaOptions {
  commonName?: string;
  /** Becomes notBefore; notAfter is 20 years later. */
  now: Date;
}

/**
 * A new self-signed mock CA: RSA 2048, sha256WithRSAEncryption, subject
 * C=JP, O=shomei mock environment, CN=<commonName>; basicConstraints CA:TRUE
 * with pathLenConstraint 0 (it issues end-entity certificates only), keyUsage
 * keyCertSign + cRLSign, both critical; a subject key identifier.
 *
 * The real JPKI has separate CAs for signing and for user authentication
 * certificates; the mock signs every kind, and its CRL, with this one.
 */
export async function createMockCa(options: CreateMockCaOptions): Promise<MockCaMaterial> {
  const commonName = options.commonName ?? defaultMockCaCommonName;
  if (commonName.length === 0 || commonName.length > maxCommonNameLength) {
    throw new RangeError(`mock CA commonName must be 1 to ${maxCommonNameLength} characters`);
  }
  if (!isEncodableTime(options.now)) throw new RangeError("now must be a valid date between 1950 and 9999");
  const notBefore = truncateToSeconds(options.now);
  const notAfter = addUtcYears(notBefore, mockCaValidityYears);

  const keys = await generateRsaKeyPair();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: randomSerialNumberHex(),
      name: distinguishedName(commonName, mockCaOrganization),
      notBefore,
      notAfter,
      keys,
      signingAlgorithm: rsaSigningAlgorithm,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );
  return {
    certificatePem: certificate.toString("pem"),
    privateKeyPem: await privateKeyToPem(keys.privateKey),
  };
}

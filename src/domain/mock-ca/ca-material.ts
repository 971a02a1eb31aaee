import { createPrivateKey, createPublicKey } from "node:crypto";
import { importPrivateKeyPem, type PrivateKey } from "./keys.ts";
import { x509 } from "./x509-runtime.ts";

/** What the caller persists for the mock CA. */
export interface MockCaMaterial {
  certificatePem: string;
  /** PKCS#8 PEM ("BEGIN PRIVATE KEY"). */
  privateKeyPem: string;
}

/** The mock CA, ready to sign. */
export interface LoadedMockCa {
  certificate: x509.X509Certificate;
  signingKey: PrivateKey;
  /** The authority key identifier certificates and CRLs it signs carry. */
  authorityKeyIdentifier: x509.AuthorityKeyIdentifierExtension;
}

/**
 * Parses stored CA material and checks that it is usable: a CA certificate
 * (basicConstraints CA:TRUE) whose public key belongs to the private key.
 * Mismatched material is a storage fault, not a caller's input error.
 */
export async function loadMockCa(material: MockCaMaterial): Promise<LoadedMockCa> {
  const certificate = new x509.X509Certificate(material.certificatePem);
  const constraints = certificate.getExtension(x509.BasicConstraintsExtension);
  if (!constraints?.ca) throw new Error("mock CA certificate is not a CA certificate (basicConstraints CA:TRUE missing)");

  const publicFromKey = createPublicKey(createPrivateKey(material.privateKeyPem)).export({ type: "spki", format: "der" });
  if (!publicFromKey.equals(Buffer.from(certificate.publicKey.rawData))) {
    throw new Error("mock CA private key does not belong to the mock CA certificate");
  }
  const signingKey = await importPrivateKeyPem(material.privateKeyPem);

  const subjectKeyId = certificate.getExtension(x509.SubjectKeyIdentifierExtension);
  const authorityKeyIdentifier = subjectKeyId
    ? new x509.AuthorityKeyIdentifierExtension(subjectKeyId.keyId)
    : await x509.AuthorityKeyIdentifierExtension.create(certificate.publicKey);
  return { certificate, signingKey, authorityKeyIdentifier };
}

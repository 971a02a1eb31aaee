import { JpkiError } from "./jpki-error.ts";

/** What the signing app hands back, as the form carries it. */
export interface SignedChallengeForm {
  challenge: string;
  /** The certificate: PEM, or its DER in base64 or base64url. */
  certificate: string;
  /** The signature in base64 or base64url. */
  signature: string;
}

const maxCertificateBytes = 16 * 1024;
const maxSignatureBytes = 1024;
const base64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

function decode(text: string, max: number): Buffer | undefined {
  const compact = text.replace(/\s+/g, "");
  if (compact === "" || compact.length > Math.ceil((max * 4) / 3) + 4 || !base64.test(compact)) return undefined;
  const bytes = Buffer.from(compact.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  return bytes.length > 0 ? bytes : undefined;
}

/** The certificate's DER, from PEM or base64; certificate_invalid when it is neither. */
export function certificateDer(text: string): Buffer {
  const pem = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(text);
  const der = decode(pem ? pem[1]! : text, maxCertificateBytes);
  if (!der) throw new JpkiError("certificate_invalid", "The certificate is missing or is not PEM or base64. Paste the certificate your signing app gave you.");
  return der;
}

/** The signature's octets; signature_invalid when it is not base64. */
export function signatureOctets(text: string): Buffer {
  const octets = decode(text, maxSignatureBytes);
  if (!octets) throw new JpkiError("signature_invalid", "The signature is missing or is not base64. Paste the signature your signing app gave you.");
  return octets;
}

import { webcrypto, x509 } from "./x509-runtime.ts";

/** Every key in the mock profile: RSA 2048, e = 65537, signing with SHA-256 (sha256WithRSAEncryption). */
export const rsaSigningAlgorithm = {
  name: "RSASSA-PKCS1-v1_5",
  hash: "SHA-256",
} as const;

const rsaKeyGenParams = {
  ...rsaSigningAlgorithm,
  modulusLength: 2048,
  publicExponent: new Uint8Array([0x01, 0x00, 0x01]),
};

const pkcs8Tag = "PRIVATE KEY";

export type KeyPair = webcrypto.CryptoKeyPair;
export type PrivateKey = webcrypto.CryptoKey;

/** A new RSA 2048 key pair; the private key is extractable so it can be handed out as PKCS#8. */
export async function generateRsaKeyPair(): Promise<KeyPair> {
  return webcrypto.subtle.generateKey(rsaKeyGenParams, true, ["sign", "verify"]);
}

/** The mock's other key kind: ECDSA on P-256, for signatures that are not RSA. */
export async function generateEcP256KeyPair(): Promise<KeyPair> {
  return webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
}

export type MockKeyAlgorithm = "rsa_2048" | "ec_p256";

export function generateKeyPair(algorithm: MockKeyAlgorithm): Promise<KeyPair> {
  return algorithm === "ec_p256" ? generateEcP256KeyPair() : generateRsaKeyPair();
}

/** PKCS#8 PEM ("BEGIN PRIVATE KEY") of a private key. */
export async function privateKeyToPem(key: PrivateKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey("pkcs8", key);
  return x509.PemConverter.encode(der, pkcs8Tag);
}

/** Imports a PKCS#8 PEM RSA private key for signing with SHA-256. */
export async function importPrivateKeyPem(pem: string): Promise<PrivateKey> {
  const blocks = x509.PemConverter.decodeWithHeaders(pem);
  const block = blocks.find((b) => b.type === pkcs8Tag);
  if (!block) throw new Error("expected a PKCS#8 PEM private key (BEGIN PRIVATE KEY)");
  return webcrypto.subtle.importKey("pkcs8", block.rawData, rsaSigningAlgorithm, false, ["sign"]);
}

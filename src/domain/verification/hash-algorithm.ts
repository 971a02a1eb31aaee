/** The digests a signature may be over. SHA-1 is not among them. */
export const hashAlgorithms = ["sha256", "sha384", "sha512"] as const;
export type HashAlgorithm = (typeof hashAlgorithms)[number];

export const digestLength: Record<HashAlgorithm, number> = { sha256: 32, sha384: 48, sha512: 64 };

/** DER DigestInfo up to the digest octets (RFC 8017 §9.2 note 1): what RSA PKCS#1 v1.5 signs before the digest. */
export const digestInfoPrefix: Record<HashAlgorithm, Buffer> = {
  sha256: Buffer.from("3031300d060960864801650304020105000420", "hex"),
  sha384: Buffer.from("3041300d060960864801650304020205000430", "hex"),
  sha512: Buffer.from("3051300d060960864801650304020305000440", "hex"),
};

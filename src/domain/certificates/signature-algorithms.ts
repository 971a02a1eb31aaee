/**
 * The signature algorithm identifiers CRLs, OCSP responses and our own
 * writers use (RFC 4055 §5 for RSA, RFC 5758 §3.2 for ECDSA), in one place.
 * Which of them a reader accepts is its own decision.
 */
export type SignatureHash = "sha256" | "sha384" | "sha512";
export type SignatureKind = "rsa" | "ecdsa";

export const signatureAlgorithmOids: Record<SignatureKind, Record<SignatureHash, string>> = {
  rsa: { sha256: "1.2.840.113549.1.1.11", sha384: "1.2.840.113549.1.1.12", sha512: "1.2.840.113549.1.1.13" },
  ecdsa: { sha256: "1.2.840.10045.4.3.2", sha384: "1.2.840.10045.4.3.3", sha512: "1.2.840.10045.4.3.4" },
};

/** OID → kind and hash, for every identifier above. */
export const signatureAlgorithmsByOid: ReadonlyMap<string, { kind: SignatureKind; hash: SignatureHash }> = new Map(
  (Object.entries(signatureAlgorithmOids) as [SignatureKind, Record<SignatureHash, string>][]).flatMap(([kind, byHash]) =>
    (Object.entries(byHash) as [SignatureHash, string][]).map(([hash, oid]) => [oid, { kind, hash }] as const),
  ),
);

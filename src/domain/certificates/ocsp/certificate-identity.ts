import { createHash, X509Certificate } from "node:crypto";
import { readTlv, tags } from "../x509/der.ts";

export type CertIdHash = "sha1" | "sha256";

/**
 * What OCSP names a certificate's holder by: the subject Name exactly as
 * encoded, and the public key's bits (the BIT STRING's content without its
 * unused-bits octet). CertID hashes both for the issuer (RFC 6960 §4.1.1);
 * ResponderID names the signer by one or the other (§4.2.1).
 */
export class CertificateIdentity {
  readonly certificate: X509Certificate;
  readonly subject: Uint8Array;
  readonly publicKeyBits: Uint8Array;

  constructor(der: Uint8Array) {
    this.certificate = new X509Certificate(der);
    const { subject, publicKeyBits } = subjectAndKey(der);
    this.subject = subject;
    this.publicKeyBits = publicKeyBits;
  }

  nameHash(hash: CertIdHash): Buffer {
    return createHash(hash).update(this.subject).digest();
  }

  keyHash(hash: CertIdHash): Buffer {
    return createHash(hash).update(this.publicKeyBits).digest();
  }
}

/** Walks tbsCertificate to the subject and subjectPublicKeyInfo (RFC 5280 §4.1). */
function subjectAndKey(der: Uint8Array): { subject: Uint8Array; publicKeyBits: Uint8Array } {
  const certificate = readTlv(der, 0);
  const tbs = readTlv(certificate.content, 0);
  const fields = tbs.content;
  let at = 0;
  const next = () => {
    const start = at;
    const tlv = readTlv(fields, at);
    at = tlv.end;
    return { tlv, bytes: fields.subarray(start, tlv.end) };
  };
  if (fields[0] === tags.contextConstructed0) next(); // version
  next(); // serialNumber
  next(); // signature
  next(); // issuer
  next(); // validity
  const subject = next().bytes;
  const spki = next().tlv;
  const algorithm = readTlv(spki.content, 0);
  const bits = readTlv(spki.content, algorithm.end);
  return { subject, publicKeyBits: bits.content.subarray(1) };
}

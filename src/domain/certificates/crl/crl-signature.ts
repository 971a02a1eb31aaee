import { constants, verify, type KeyObject, type VerifyKeyObjectInput, type VerifyPublicKeyInput } from "node:crypto";
import { signatureAlgorithmOids, type SignatureHash } from "../signature-algorithms.ts";
import { DerCursor, derTags, oidText, readSmallUnsigned } from "./der-cursor.ts";
import { CrlRejectedError } from "./verified-crl.ts";

type Hash = SignatureHash;

interface SignatureScheme {
  kind: "rsa-pkcs1" | "rsa-pss" | "ecdsa";
  hash: Hash;
  /** RSA-PSS only. */
  saltLength?: number;
}

const pkcs1 = new Map<string, Hash>(Object.entries(signatureAlgorithmOids.rsa).map(([hash, oid]) => [oid, hash as Hash]));
// ECDSA lists are read with SHA-256 or SHA-384, matching the P-256 and P-384 keys accepted below.
const ecdsa = new Map<string, Hash>([
  [signatureAlgorithmOids.ecdsa.sha256, "sha256"],
  [signatureAlgorithmOids.ecdsa.sha384, "sha384"],
]);
const hashes = new Map<string, Hash>([
  ["2.16.840.1.101.3.4.2.1", "sha256"],
  ["2.16.840.1.101.3.4.2.2", "sha384"],
  ["2.16.840.1.101.3.4.2.3", "sha512"],
]);
const rsaPssOid = "1.2.840.113549.1.1.10";
const mgf1Oid = "1.2.840.113549.1.1.8";
const ecCurves = new Set(["prime256v1", "secp384r1"]);

/**
 * Checks signatureValue over the raw tbsCertList bytes with the issuer's key:
 * RSA PKCS#1 v1.5 or RSA-PSS with SHA-256/384/512, ECDSA on P-256 or P-384
 * with SHA-256/384. Any other algorithm, a key of another kind, or a
 * signature that does not verify is "signature_invalid": a list that cannot be
 * verified is not used.
 */
export async function verifyCrlSignature(tbsCertList: Uint8Array, algorithm: Uint8Array, signature: Uint8Array, key: KeyObject): Promise<void> {
  const scheme = readSignatureAlgorithm(algorithm);
  const keyType = key.asymmetricKeyType;
  let options: VerifyKeyObjectInput | VerifyPublicKeyInput;
  if (scheme.kind === "ecdsa") {
    const curve = key.asymmetricKeyDetails?.namedCurve ?? "";
    if (keyType !== "ec" || !ecCurves.has(curve)) throw invalid(`an ECDSA signature needs a P-256 or P-384 issuer key, not ${keyType} ${curve}`.trim());
    options = { key, dsaEncoding: "der" };
  } else if (scheme.kind === "rsa-pss") {
    if (keyType !== "rsa" && keyType !== "rsa-pss") throw invalid(`an RSA-PSS signature needs an RSA issuer key, not ${keyType}`);
    options = { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: scheme.saltLength! };
  } else {
    if (keyType !== "rsa") throw invalid(`an RSA signature needs an RSA issuer key, not ${keyType}`);
    options = { key, padding: constants.RSA_PKCS1_PADDING };
  }
  // The callback form hashes on libuv's thread pool, while the caller walks the entries.
  const ok = await new Promise<boolean>((resolve, reject) => {
    try {
      verify(scheme.hash, tbsCertList, options, signature, (error, result) => (error ? reject(error) : resolve(result)));
    } catch (error) {
      reject(error as Error);
    }
  }).catch((error: Error) => {
    throw invalid(`the signature could not be checked: ${error.message}`);
  });
  if (!ok) throw invalid("the signature does not verify with the issuer's key");
}

function invalid(message: string): CrlRejectedError {
  return new CrlRejectedError("signature_invalid", message);
}

/** AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }. */
function readAlgorithmIdentifier(cursor: DerCursor, offset: number, limit: number, what: string): { oid: string; paramsStart: number; paramsEnd: number; next: number } {
  const next = cursor.expect(offset, limit, derTags.sequence, what);
  const end = cursor.end;
  const oidEnd = cursor.expect(cursor.start, end, derTags.oid, `${what} algorithm`);
  const oid = oidText(cursor.content());
  return { oid, paramsStart: oidEnd, paramsEnd: end, next };
}

/** Parameters must be absent or NULL (RSA PKCS#1 and the SHA-2 hashes), or absent (ECDSA). */
function checkNoParameters(cursor: DerCursor, start: number, end: number, nullAllowed: boolean, what: string): void {
  if (start === end) return;
  const next = cursor.read(start, end, what);
  if (!nullAllowed || cursor.tag !== derTags.null || cursor.end !== cursor.start || next !== end) throw invalid(`${what}: unexpected parameters`);
}

export function readSignatureAlgorithm(algorithm: Uint8Array): SignatureScheme {
  const cursor = new DerCursor(algorithm);
  const { oid, paramsStart, paramsEnd } = readAlgorithmIdentifier(cursor, 0, algorithm.length, "signatureAlgorithm");
  const rsaHash = pkcs1.get(oid);
  if (rsaHash) {
    checkNoParameters(cursor, paramsStart, paramsEnd, true, "signatureAlgorithm");
    return { kind: "rsa-pkcs1", hash: rsaHash };
  }
  const ecHash = ecdsa.get(oid);
  if (ecHash) {
    checkNoParameters(cursor, paramsStart, paramsEnd, false, "signatureAlgorithm");
    return { kind: "ecdsa", hash: ecHash };
  }
  if (oid === rsaPssOid) return readPssParameters(cursor, paramsStart, paramsEnd);
  throw invalid(`unsupported signature algorithm ${oid}`);
}

/**
 * RSASSA-PSS-params ::= SEQUENCE { hashAlgorithm [0], maskGenAlgorithm [1],
 * saltLength [2] INTEGER DEFAULT 20, trailerField [3] INTEGER DEFAULT 1 }.
 * The hash must be SHA-2 (the default, SHA-1, is not accepted) and MGF1 must
 * use the same hash, which is what node:crypto verifies.
 */
function readPssParameters(cursor: DerCursor, start: number, end: number): SignatureScheme {
  const what = "RSASSA-PSS parameters";
  const bytes = cursor.bytes;
  const sequenceEnd = cursor.expect(start, end, derTags.sequence, what);
  if (sequenceEnd !== end) throw invalid(`${what}: trailing data`);
  let hash: Hash | undefined;
  let mgfHash: Hash | undefined;
  let saltLength = 20;
  let last = -1;
  for (let offset = cursor.start; offset < sequenceEnd; ) {
    offset = cursor.read(offset, sequenceEnd, what);
    const field = cursor.tag - 0xa0;
    if (field < 0 || field > 3 || field <= last) throw invalid(`${what}: unexpected field`);
    last = field;
    const fieldEnd = cursor.end;
    if (field === 0) {
      const algorithm = readAlgorithmIdentifier(cursor, cursor.start, fieldEnd, "hashAlgorithm");
      checkNoParameters(cursor, algorithm.paramsStart, algorithm.paramsEnd, true, "hashAlgorithm");
      hash = hashes.get(algorithm.oid);
      if (!hash) throw invalid(`${what}: unsupported hash ${algorithm.oid}`);
    } else if (field === 1) {
      const mgf = readAlgorithmIdentifier(cursor, cursor.start, fieldEnd, "maskGenAlgorithm");
      if (mgf.oid !== mgf1Oid) throw invalid(`${what}: unsupported mask generation ${mgf.oid}`);
      const inner = readAlgorithmIdentifier(cursor, mgf.paramsStart, mgf.paramsEnd, "MGF1 hash");
      checkNoParameters(cursor, inner.paramsStart, inner.paramsEnd, true, "MGF1 hash");
      mgfHash = hashes.get(inner.oid);
    } else {
      cursor.expect(cursor.start, fieldEnd, derTags.integer, what);
      const value = readSmallUnsigned(bytes, cursor.start, cursor.end, what);
      if (field === 2) saltLength = value;
      else if (value !== 1) throw invalid(`${what}: trailerField must be 1`);
    }
  }
  if (!hash) throw invalid(`${what}: SHA-1 (the default hash) is not accepted`);
  if (mgfHash !== hash) throw invalid(`${what}: MGF1 must use the signature's hash`);
  return { kind: "rsa-pss", hash, saltLength };
}

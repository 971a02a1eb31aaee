import { DerError, decodeOid, readAll, readTlv, tags, type Tlv } from "./der.ts";

/**
 * Readers of the extension values shomei acts on (RFC 5280 §4.2), each given
 * the extnValue's content and throwing DerError when it is malformed.
 */

export type KeyUsage = "digitalSignature" | "nonRepudiation" | "keyEncipherment" | "dataEncipherment" | "keyAgreement" | "keyCertSign" | "cRLSign" | "encipherOnly" | "decipherOnly";
/** In the order of their bits: digitalSignature is bit 0. */
const keyUsageNames: readonly KeyUsage[] = ["digitalSignature", "nonRepudiation", "keyEncipherment", "dataEncipherment", "keyAgreement", "keyCertSign", "cRLSign", "encipherOnly", "decipherOnly"];

export const extensionOids = {
  keyUsage: "2.5.29.15",
  basicConstraints: "2.5.29.19",
  certificatePolicies: "2.5.29.32",
  crlDistributionPoints: "2.5.29.31",
  authorityInfoAccess: "1.3.6.1.5.5.7.1.1",
  subjectAltName: "2.5.29.17",
} as const;

const bitString = 0x03;
const boolean = 0x01;
/** GeneralName uniformResourceIdentifier [6] IMPLICIT IA5String. */
const uniformResourceIdentifier = 0x86;
const ocspAccessMethod = "1.3.6.1.5.5.7.48.1";

function one(value: Uint8Array, tag: number, what: string): Tlv {
  const tlv = readTlv(value, 0);
  if (tlv.tag !== tag || tlv.end !== value.length) throw new DerError(`${what} is not one ${tag === tags.sequence ? "SEQUENCE" : "value of its type"}`);
  return tlv;
}

function uri(name: Tlv): string | undefined {
  if (name.tag !== uniformResourceIdentifier) return undefined;
  for (const byte of name.content) if (byte > 0x7e || byte < 0x20) throw new DerError("a URI in a GeneralName is not printable IA5 text");
  return new TextDecoder("latin1").decode(name.content);
}

/** KeyUsage ::= BIT STRING. */
export function readKeyUsage(value: Uint8Array): KeyUsage[] {
  const bits = one(value, bitString, "keyUsage").content;
  if (bits.length === 0 || bits[0]! > 7) throw new DerError("keyUsage has a malformed BIT STRING");
  return keyUsageNames.filter((_, index) => {
    const octet = bits[1 + (index >> 3)];
    return octet !== undefined && (octet & (0x80 >> (index & 7))) !== 0;
  });
}

/** BasicConstraints ::= SEQUENCE { cA BOOLEAN DEFAULT FALSE, pathLenConstraint INTEGER OPTIONAL }. */
export function readIsCa(value: Uint8Array): boolean {
  const [first] = readAll(one(value, tags.sequence, "basicConstraints").content);
  if (first?.tag !== boolean) return false;
  if (first.content.length !== 1) throw new DerError("basicConstraints cA is not one octet");
  return first.content[0] !== 0;
}

/**
 * The URIs of the full names of CRLDistributionPoints ::= SEQUENCE OF
 * DistributionPoint { distributionPoint [0] { fullName [0] GeneralNames | … }, … }.
 */
export function readCrlDistributionPointUris(value: Uint8Array): string[] {
  return readAll(one(value, tags.sequence, "cRLDistributionPoints").content).flatMap((point) => {
    if (point.tag !== tags.sequence) throw new DerError("malformed DistributionPoint");
    const name = readAll(point.content).find((part) => part.tag === tags.contextConstructed0);
    const fullName = name && readAll(name.content).find((part) => part.tag === tags.contextConstructed0);
    return fullName ? readAll(fullName.content).flatMap((general) => uri(general) ?? []) : [];
  });
}

/** The OCSP responder URIs of AuthorityInfoAccessSyntax ::= SEQUENCE OF AccessDescription { accessMethod, accessLocation }. */
export function readOcspUris(value: Uint8Array): string[] {
  return readAll(one(value, tags.sequence, "authorityInfoAccess").content).flatMap((description) => {
    const [method, location, ...rest] = readAll(description.tag === tags.sequence ? description.content : new Uint8Array());
    if (!method || method.tag !== tags.oid || !location || rest.length) throw new DerError("malformed AccessDescription");
    const url = uri(location);
    return decodeOid(method.content) === ocspAccessMethod && url !== undefined ? [url] : [];
  });
}

import { DerError, decodeOid, encodeOid, encodeTlv, readAll, readTlv, tags } from "./der.ts";

/** OID of the subjectAltName extension. */
export const subjectAltNameOid = "2.5.29.17";

/** An otherName entry of subjectAltName whose value is a character string. */
export interface OtherNameText {
  typeId: string;
  value: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The text of a string value: UTF8String (what JPKI writes), PrintableString, IA5String, BMPString, or UTF-8 in an OCTET STRING. */
function decodeText(tlv: { tag: number; content: Uint8Array }): string {
  switch (tlv.tag) {
    case tags.utf8String:
    case tags.printableString:
    case tags.ia5String:
    case tags.octetString:
      try {
        return utf8.decode(tlv.content);
      } catch {
        throw new DerError("otherName value is not valid UTF-8");
      }
    case tags.bmpString: {
      if (tlv.content.length % 2) throw new DerError("BMPString of odd length");
      let text = "";
      for (let i = 0; i < tlv.content.length; i += 2) text += String.fromCharCode((tlv.content[i]! << 8) | tlv.content[i + 1]!);
      return text;
    }
    default:
      throw new DerError(`otherName value has tag 0x${tlv.tag.toString(16)}, not a character string`);
  }
}

/**
 * The otherName entries of a subjectAltName extension value (GeneralNames),
 * in order; other kinds of names are skipped. Throws DerError for malformed DER.
 *
 *   GeneralName ::= CHOICE { otherName [0] IMPLICIT OtherName, … }
 *   OtherName ::= SEQUENCE { type-id OBJECT IDENTIFIER, value [0] EXPLICIT ANY }
 */
export function readOtherNames(extensionValue: Uint8Array): OtherNameText[] {
  const names = readTlv(extensionValue, 0);
  if (names.tag !== tags.sequence || names.end !== extensionValue.length) throw new DerError("subjectAltName is not one SEQUENCE");
  const result: OtherNameText[] = [];
  for (const name of readAll(names.content)) {
    if (name.tag !== tags.contextConstructed0) continue;
    const [typeId, explicit, ...rest] = readAll(name.content);
    if (!typeId || typeId.tag !== tags.oid || !explicit || explicit.tag !== tags.contextConstructed0 || rest.length) {
      throw new DerError("malformed otherName");
    }
    const values = readAll(explicit.content);
    if (values.length !== 1) throw new DerError("otherName value must be exactly one element");
    result.push({ typeId: decodeOid(typeId.content), value: decodeText(values[0]!) });
  }
  return result;
}

/** A subjectAltName extension value of otherName entries, each value a UTF8String. */
export function encodeOtherNames(entries: readonly OtherNameText[]): Uint8Array {
  const encoder = new TextEncoder();
  return encodeTlv(
    tags.sequence,
    ...entries.map((e) =>
      encodeTlv(tags.contextConstructed0, encodeOid(e.typeId), encodeTlv(tags.contextConstructed0, encodeTlv(tags.utf8String, encoder.encode(e.value)))),
    ),
  );
}

import { DerError, decodeOid, readAll, tags } from "./der.ts";

/** Short names of the attribute types a name is written with; others are written as their OID. */
const shortNames: Record<string, string> = {
  "2.5.4.3": "CN",
  "2.5.4.7": "L",
  "2.5.4.8": "ST",
  "2.5.4.10": "O",
  "2.5.4.11": "OU",
  "2.5.4.6": "C",
  "0.9.2342.19200300.100.1.25": "DC",
  "1.2.840.113549.1.9.1": "E",
  "2.5.4.42": "G",
  "2.5.4.43": "I",
  "2.5.4.4": "SN",
  "2.5.4.12": "T",
};

const set = 0x31;
const teletexString = 0x14;
const universalString = 0x1c;
const utf8 = new TextDecoder("utf-8", { fatal: true });

function text(tag: number, content: Uint8Array): string | undefined {
  switch (tag) {
    case tags.utf8String:
    case tags.printableString:
    case tags.ia5String:
      try {
        return utf8.decode(content);
      } catch {
        throw new DerError("a name attribute is not valid UTF-8");
      }
    case teletexString:
      return new TextDecoder("latin1").decode(content);
    case tags.bmpString: {
      if (content.length % 2) throw new DerError("BMPString of odd length");
      let out = "";
      for (let i = 0; i < content.length; i += 2) out += String.fromCharCode((content[i]! << 8) | content[i + 1]!);
      return out;
    }
    case universalString: {
      if (content.length % 4) throw new DerError("UniversalString of a length not a multiple of 4");
      let out = "";
      for (let i = 0; i < content.length; i += 4) {
        out += String.fromCodePoint(((content[i]! << 24) | (content[i + 1]! << 16) | (content[i + 2]! << 8) | content[i + 3]!) >>> 0);
      }
      return out;
    }
    default:
      return undefined;
  }
}

/** RFC 4514 §2.4 escaping of an attribute value. */
function escape(value: string): string {
  return value
    .replace(/([,+"\\<>;])/g, "\\$1")
    .replace(/^([ #])/, "\\$1")
    .replace(/ $/, "\\ ")
    .replace(/[\r\n\t]/g, (c) => `\\${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/**
 * The text of a Name's content (a SEQUENCE OF RelativeDistinguishedName), in
 * the certificate's order: `C=JP, O=…, CN=…`, attributes of one RDN joined by
 * `+`; a value that is not a character string is written `#` and the hex of
 * its encoding.
 */
export function formatDistinguishedName(content: Uint8Array): string {
  return readAll(content)
    .map((rdn) => {
      if (rdn.tag !== set) throw new DerError("RelativeDistinguishedName is not a SET");
      return readAll(rdn.content)
        .map((attribute) => {
          if (attribute.tag !== tags.sequence) throw new DerError("AttributeTypeAndValue is not a SEQUENCE");
          const [type, value, ...rest] = readAll(attribute.content);
          if (!type || type.tag !== tags.oid || !value || rest.length) throw new DerError("malformed AttributeTypeAndValue");
          const oid = decodeOid(type.content);
          const decoded = text(value.tag, value.content);
          const written = decoded === undefined ? `#${hex(attribute.content.subarray(type.end))}` : escape(decoded);
          return `${shortNames[oid] ?? oid}=${written}`;
        })
        .join("+");
    })
    .join(", ");
}

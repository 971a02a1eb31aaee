import { x509 } from "./x509-runtime.ts";

/** RFC 5280's upper bound on a commonName (ub-common-name). */
export const maxCommonNameLength = 64;

function directoryString(value: string): x509.JsonAttributeObject {
  return x509.Name.isPrintableString(value) ? { printableString: value } : { utf8String: value };
}

/**
 * A distinguished name C=JP[, O=organization], CN=commonName. Built from
 * attribute values, never parsed from text, so commas, quotes or a leading "#"
 * stay part of the value. Values that fit PrintableString are written as one,
 * anything else (a name in kanji) as UTF8String.
 */
export function distinguishedName(commonName: string, organization?: string): x509.Name {
  const rdns: x509.JsonNameParams = [{ C: [{ printableString: "JP" }] }];
  if (organization !== undefined) rdns.push({ O: [directoryString(organization)] });
  rdns.push({ CN: [directoryString(commonName)] });
  return new x509.Name(rdns);
}

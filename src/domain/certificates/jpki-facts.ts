import type { OtherNameText } from "./x509/subject-alt-name.ts";

/**
 * The basic four facts of a JPKI signature certificate. J-LIS writes them as
 * subjectAltName otherName entries under its personal-data arc
 * 1.2.392.200149.8.5.5, each value a character string:
 *
 * | OID                      | fact                                                    |
 * |--------------------------|---------------------------------------------------------|
 * | 1.2.392.200149.8.5.5.1   | name                                                    |
 * | 1.2.392.200149.8.5.5.2   | positions of substitute characters in the name ("0"/"1" per character) |
 * | 1.2.392.200149.8.5.5.3   | gender: "1" male, "2" female, "3" not known             |
 * | 1.2.392.200149.8.5.5.4   | date of birth: era code (0 not known, 1 Meiji … 5 Reiwa) + YYYYMMDD |
 * | 1.2.392.200149.8.5.5.5   | address                                                 |
 * | 1.2.392.200149.8.5.5.6   | positions of substitute characters in the address       |
 *
 * This is personal data: it is sealed at rest and never logged.
 */
export const jpkiFactOids = {
  name: "1.2.392.200149.8.5.5.1",
  nameSubstituteCharacters: "1.2.392.200149.8.5.5.2",
  gender: "1.2.392.200149.8.5.5.3",
  dateOfBirth: "1.2.392.200149.8.5.5.4",
  address: "1.2.392.200149.8.5.5.5",
  addressSubstituteCharacters: "1.2.392.200149.8.5.5.6",
} as const;

export const jpkiPersonalDataArc = "1.2.392.200149.8.5.5";

export type Gender = "male" | "female" | "not_known";
const genderCodes: Record<string, Gender> = { "1": "male", "2": "female", "3": "not_known" };
export const genderCode: Record<Gender, string> = { male: "1", female: "2", not_known: "3" };

export interface JpkiFacts {
  name: string;
  nameSubstituteCharacters: string;
  /** As written: era code and YYYYMMDD. */
  dateOfBirth: string;
  /** undefined when the certificate carries no gender code or one not listed above. */
  gender: Gender | undefined;
  address: string;
  addressSubstituteCharacters: string;
}

export class JpkiFactsError extends Error {
  override name = "JpkiFactsError";
}

/**
 * The facts among a certificate's otherName entries; a fact the certificate
 * does not carry is empty. Each fact may appear once: a certificate that
 * says two names is not one whose facts can be relied on.
 */
export function readJpkiFacts(otherNames: readonly OtherNameText[]): JpkiFacts {
  const seen = new Map<string, string>();
  for (const entry of otherNames) {
    if (!entry.typeId.startsWith(`${jpkiPersonalDataArc}.`)) continue;
    if (seen.has(entry.typeId)) throw new JpkiFactsError(`the certificate carries ${entry.typeId} more than once`);
    seen.set(entry.typeId, entry.value);
  }
  const fact = (oid: string) => seen.get(oid) ?? "";
  return {
    name: fact(jpkiFactOids.name),
    nameSubstituteCharacters: fact(jpkiFactOids.nameSubstituteCharacters),
    dateOfBirth: fact(jpkiFactOids.dateOfBirth),
    gender: genderCodes[fact(jpkiFactOids.gender)],
    address: fact(jpkiFactOids.address),
    addressSubstituteCharacters: fact(jpkiFactOids.addressSubstituteCharacters),
  };
}

/** The otherName entries a JPKI signature certificate carries for these facts, in the order real cards show them. */
export function jpkiFactEntries(facts: JpkiFacts): OtherNameText[] {
  const entries: OtherNameText[] = [
    { typeId: jpkiFactOids.name, value: facts.name },
    { typeId: jpkiFactOids.dateOfBirth, value: facts.dateOfBirth },
    { typeId: jpkiFactOids.gender, value: facts.gender ? genderCode[facts.gender] : "" },
    { typeId: jpkiFactOids.address, value: facts.address },
    { typeId: jpkiFactOids.nameSubstituteCharacters, value: facts.nameSubstituteCharacters },
    { typeId: jpkiFactOids.addressSubstituteCharacters, value: facts.addressSubstituteCharacters },
  ];
  return entries.filter((e) => e.value !== "");
}

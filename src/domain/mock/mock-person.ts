import { invalidField } from "../errors.ts";
import type { JpkiFacts } from "../certificates/jpki-facts.ts";

/**
 * The facts of a mock signature certificate: what the caller gave, and for
 * the rest an obviously fictional person in the forms JPKI uses (full-width
 * space between family and given name, address without postal code, date of
 * birth as era code + YYYYMMDD). Substitute-character flags default to "0"
 * for every character of the name or address they describe.
 */
export function completeFacts(given: Partial<JpkiFacts>): JpkiFacts {
  const name = given.name || "見本　花子";
  const address = given.address || "東京都千代田区霞が関二丁目一番二号";
  return {
    name,
    nameSubstituteCharacters: given.nameSubstituteCharacters || "0".repeat([...name].length),
    dateOfBirth: given.dateOfBirth || "419900102",
    gender: given.gender ?? "female",
    address,
    addressSubstituteCharacters: given.addressSubstituteCharacters || "0".repeat([...address].length),
  };
}

/** Gregorian dates on which each era began (JPKI era codes 1 Meiji … 5 Reiwa). */
const eraStarts: [code: string, start: string][] = [
  ["5", "20190501"],
  ["4", "19890108"],
  ["3", "19261225"],
  ["2", "19120730"],
  ["1", "18681023"],
];

function isCalendarDate(yyyymmdd: string): boolean {
  const [y, m, d] = [yyyymmdd.slice(0, 4), yyyymmdd.slice(4, 6), yyyymmdd.slice(6, 8)].map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/**
 * What the mock refuses to write: a date of birth that is not era code +
 * YYYYMMDD with the era the date falls in (0 only with an unknown date,
 * 00000000), substitute-character flags that are not 0/1 or not one per
 * character, and an address over 200 characters (the JPKI limit).
 */
export function validateFacts(facts: JpkiFacts): void {
  if ([...facts.name].length > 100) throw invalidField("person.name", "person.name must be at most 100 characters");
  if ([...facts.address].length > 200) throw invalidField("person.address", "person.address must be at most 200 characters");
  const date = /^([0-5])(\d{8})$/.exec(facts.dateOfBirth);
  if (!date) throw invalidField("person.date_of_birth", "person.date_of_birth must be an era code (0-5) and YYYYMMDD, e.g. 419900102");
  const [, era, gregorian] = date as unknown as [string, string, string];
  if (era === "0") {
    if (gregorian !== "00000000") throw invalidField("person.date_of_birth", "era code 0 (not known) goes with 00000000");
  } else {
    if (!isCalendarDate(gregorian)) throw invalidField("person.date_of_birth", "person.date_of_birth is not a calendar date");
    const expected = eraStarts.find(([, start]) => gregorian >= start)?.[0];
    if (expected !== era) throw invalidField("person.date_of_birth", `the date falls in era ${expected ?? "before Meiji"}, not ${era}`);
  }
  for (const [field, flags, text] of [
    ["person.name_substitute_characters", facts.nameSubstituteCharacters, facts.name],
    ["person.address_substitute_characters", facts.addressSubstituteCharacters, facts.address],
  ] as const) {
    if (!/^[01]*$/.test(flags) || [...flags].length !== [...text].length) {
      throw invalidField(field, `${field} must be one 0 or 1 per character of the text it describes`);
    }
  }
}

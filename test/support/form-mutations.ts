import { randomText } from "./random-messages.ts";
import type { SeededRandom } from "./seeded-random.ts";

/**
 * Query strings and form bodies (application/x-www-form-urlencoded) that
 * start from a plausible request and are then damaged the ways the web
 * damages them: a parameter dropped, repeated or emptied, values replaced by
 * random or very long text, unknown parameters, broken percent-encoding that
 * no encoder would produce, names without values, and far too many parameters.
 */
export type Parameters = [name: string, value: string][];

/** Percent sequences no encoder writes: cut short, not hex, overlong UTF-8, lone continuation bytes, NUL. */
export const badPercentEncodings = ["%", "%z", "%zz", "%E0%A4", "%C0%AF", "%FF", "%80", "%ED%A0%80", "%00", "%%", "%2", "%u0041"];

const encode = (text: string) => encodeURIComponent(text);

/** `count` mutations of `parameters`, serialized; values are encoded except where a mutation means them raw. */
export function mutatedQuery(parameters: Parameters, random: SeededRandom, strings: readonly string[], count = random.range(0, 3)): string {
  const pairs: string[][] = parameters.map(([name, value]) => [encode(name), encode(value)]);
  for (let i = 0; i < count; i++) {
    const at = pairs.length ? random.int(pairs.length) : 0;
    const mutation = random.weighted<(() => void)>([
      [3, () => pairs.splice(at, 1)],
      [3, () => pairs.length && pairs.push([pairs[at]![0]!, random.chance(0.5) ? pairs[at]![1]! : encode(randomText(random, strings))])],
      [4, () => pairs.length && (pairs[at]![1] = encode(randomText(random, strings)))],
      [2, () => pairs.length && (pairs[at]![1] = "")],
      [1, () => pairs.length && (pairs[at]![1] = encode(random.pick(["x", "\u00e9", "a b"]).repeat(random.pick([2000, 9000]))))],
      [3, () => pairs.length && (pairs[at]![1] += random.pick(badPercentEncodings))],
      [1, () => pairs.length && (pairs[at]![0] += random.pick(badPercentEncodings))],
      [2, () => pairs.push([encode(random.pick(["extra", "foo[bar]", "__proto__", "constructor", "a.b", "", "scope[]"])), encode(randomText(random, strings))])],
      [1, () => pairs.push([random.pick(["novalue", "=", "&", ""])])],
      [1, () => pairs.splice(at, 0, ...Array.from({ length: 150 }, (_, n) => [`p${n}`, "1"]))],
      [1, () => pairs.length && (pairs[at]![1] = encode(random.pick(["\u0000", "\r\n", "<script>alert(1)</script>", "' OR '1'='1", "../../../etc/passwd"])))],
    ]);
    mutation();
  }
  return pairs.map((pair) => pair.join("=")).join("&");
}

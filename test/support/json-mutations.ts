import type { DescMessage } from "@bufbuild/protobuf";
import type { SeededRandom } from "./seeded-random.ts";

/**
 * Bodies that a JSON RPC endpoint must refuse cleanly, starting from a valid
 * request (`valid`, the protobuf JSON of a random message): a field given the
 * wrong type, numbers past every range, unknown fields, nesting thousands of
 * levels deep, bytes that are not UTF-8, lone surrogates, duplicate keys, and
 * documents that are not JSON objects at all. Returns raw bytes, since some
 * of these cannot be written as a JavaScript string.
 */
export interface JsonBody {
  name: string;
  bytes: Buffer;
}

const wrongValues: readonly unknown[] = [
  5, -1, 1.5, true, false, null, "", "x", [], ["a"], {}, { a: 1 }, "1e400", "-0", "NaN", "Infinity", "0x10", "2019-13-45T25:61:61Z",
];
const hugeNumbers: readonly string[] = [
  "1e309", "-1e309", "18446744073709551616", "-9223372036854775809", "9223372036854775808", "4294967296", "2147483648",
  "1" + "0".repeat(400), "0." + "0".repeat(400) + "1", "1e-400", "123456789012345678901234567890.5", "-0",
];

/** The JSON names (camelCase) and proto names (snake_case) of the schema's fields: both are accepted by protobuf JSON. */
function fieldNames(schema: DescMessage): string[] {
  return schema.fields.flatMap((f) => (f.jsonName === f.name ? [f.name] : [f.jsonName, f.name]));
}

const text = (value: string): Buffer => Buffer.from(value, "utf8");

function deepNesting(random: SeededRandom, key: string): string {
  const depth = random.pick([64, 1000, 20000]);
  return random.chance(0.5)
    ? `{"${key}":` + "[".repeat(depth) + "]".repeat(depth) + "}"
    : `{"${key}":` + '{"a":'.repeat(depth) + "1" + "}".repeat(depth) + "}";
}

export function mutateJson(valid: Record<string, unknown>, schema: DescMessage, random: SeededRandom): JsonBody {
  const names = fieldNames(schema);
  const anyName = () => (names.length ? random.pick(names) : "certificateId");
  const serialized = JSON.stringify(valid);
  return random.weighted<() => JsonBody>([
    [3, () => ({ name: "valid random message", bytes: text(serialized) })],
    [4, () => ({ name: "wrong field type", bytes: text(JSON.stringify({ ...valid, [anyName()]: random.pick(wrongValues) })) })],
    [
      3,
      () => {
        const body = JSON.stringify({ ...valid, [anyName()]: "HUGE" }).replace('"HUGE"', random.pick(hugeNumbers));
        return { name: "huge number", bytes: text(body) };
      },
    ],
    [2, () => ({ name: "unknown field", bytes: text(JSON.stringify({ ...valid, [random.pick(["extra", "certificate_id_", "__proto__", "constructor", "@type", ""])]: 1 })) })],
    [1, () => ({ name: "deep nesting", bytes: text(deepNesting(random, anyName())) })],
    [
      2,
      () => {
        // Raw bytes that are not UTF-8 inside a string value.
        const bad = random.pick([[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf]]);
        return { name: "invalid UTF-8", bytes: Buffer.concat([text(`{"${anyName()}":"a`), Buffer.from(bad), text('b"}')]) };
      },
    ],
    [1, () => ({ name: "lone surrogate", bytes: text(`{"${anyName()}":"\\ud800x\\udfff"}`) })],
    [1, () => ({ name: "escaped NUL", bytes: text(`{"${anyName()}":"a\\u0000b"}`) })],
    [1, () => ({ name: "duplicate key", bytes: text(`{"${anyName()}":"a","${anyName()}":5}`) })],
    [1, () => ({ name: "truncated", bytes: text(serialized.slice(0, random.int(serialized.length))) })],
    [1, () => ({ name: "trailing garbage", bytes: text(serialized + random.pick(["}", ",", "x", "\u0000", " {}"])) })],
    [1, () => ({ name: "byte order mark", bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), text(serialized)]) })],
    [
      2,
      () => ({
        name: "not an object",
        bytes: text(random.pick(["", "null", "[]", "[{}]", '"x"', "0", "true", "{", "}", "{'a':1}", '{"a" 1}', "\u0000", "  "])),
      }),
    ],
    [1, () => ({ name: "long string", bytes: text(JSON.stringify({ ...valid, [anyName()]: "x".repeat(random.pick([10_000, 100_000])) })) })],
  ])();
}

import { create, type DescEnum, type DescField, type DescMessage, type Message } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { ScalarType } from "@bufbuild/protobuf";
import type { SeededRandom } from "./seeded-random.ts";

/**
 * Valid protobuf messages of any schema with random field values, built from
 * the generated descriptors only, so that a new field or RPC is covered with no
 * change here. Values lean towards the edges (empty, zero, extremes, unknown
 * enum numbers) and towards `strings`, the caller's pool of meaningful text
 * (real ids, so some requests get past validation).
 */
export function randomMessage(schema: DescMessage, random: SeededRandom, strings: readonly string[]): Message {
  return fill(reflect(schema, create(schema)), random, strings, 0).message;
}

const maxDepth = 3;

function fill(target: ReflectMessage, random: SeededRandom, strings: readonly string[], depth: number): ReflectMessage {
  for (const field of target.fields) {
    if (random.chance(0.3)) continue;
    // A oneof takes one member: setting the others would only replace it.
    if (field.oneof && target.oneofCase(field.oneof) !== undefined) continue;
    setRandom(target, field, random, strings, depth);
  }
  return target;
}

function setRandom(target: ReflectMessage, field: DescField, random: SeededRandom, strings: readonly string[], depth: number): void {
  switch (field.fieldKind) {
    case "scalar":
      target.set(field, randomScalar(field.scalar, random, strings));
      return;
    case "enum":
      target.set(field, randomEnumNumber(field.enum, random));
      return;
    case "message":
      if (depth < maxDepth) target.set(field, fill(reflect(field.message, create(field.message)), random, strings, depth + 1));
      return;
    case "list": {
      const list = target.get(field);
      const count = random.weighted([[5, 1], [3, 2], [1, 5]] as const);
      for (let i = 0; i < count; i++) {
        if (field.listKind === "scalar") list.add(randomScalar(field.scalar, random, strings));
        else if (field.listKind === "enum") list.add(randomEnumNumber(field.enum, random));
        else if (depth < maxDepth) list.add(fill(reflect(field.message, create(field.message)), random, strings, depth + 1));
      }
      return;
    }
    case "map": {
      const map = target.get(field);
      const count = random.int(3);
      for (let i = 0; i < count; i++) {
        const key = randomScalar(field.mapKey, random, strings);
        if (field.mapKind === "scalar") map.set(key, randomScalar(field.scalar, random, strings));
        else if (field.mapKind === "enum") map.set(key, randomEnumNumber(field.enum, random));
        else if (depth < maxDepth) map.set(key, fill(reflect(field.message, create(field.message)), random, strings, depth + 1));
      }
      return;
    }
  }
}

/** A declared value mostly; sometimes 0 or a number the enum does not declare (proto3 enums are open). */
function randomEnumNumber(desc: DescEnum, random: SeededRandom): number {
  return random.weighted([
    [6, () => random.pick(desc.values).number],
    [1, () => 0],
    [1, () => random.pick([-1, 99, 2 ** 31 - 1, -(2 ** 31)])],
  ] as const)();
}

const int32Edges = [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 1000, 1001];
const uint32Edges = [0, 1, 2 ** 32 - 1, 2 ** 31];
const int64Edges = [0n, 1n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n];
const uint64Edges = [0n, 1n, 2n ** 64n - 1n, 2n ** 63n];
const floatEdges = [0, -0, 1.5, -1e-45, 3.4e38, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];

export const textAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_ .:/%+=\u00e9\u65e5\u{1f600}\u0000'\"<>&\\";

/** A random string: a pooled one, empty, short random text, or a long one. */
export function randomText(random: SeededRandom, strings: readonly string[]): string {
  return random.weighted([
    [5, () => (strings.length ? random.pick(strings) : "")],
    [2, () => ""],
    [4, () => random.text(random.range(1, 40), textAlphabet)],
    [1, () => random.text(random.range(1000, 5000), textAlphabet)],
  ] as const)();
}

function randomScalar(type: ScalarType, random: SeededRandom, strings: readonly string[]): unknown {
  switch (type) {
    case ScalarType.STRING:
      return randomText(random, strings);
    case ScalarType.BYTES:
      return random.bytes(random.range(0, 64));
    case ScalarType.BOOL:
      return random.chance(0.5);
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return random.chance(0.6) ? random.pick(int32Edges) : random.range(-1000, 100000);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return random.chance(0.6) ? random.pick(uint32Edges) : random.range(0, 100000);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      // Timestamps are the int64 fields of this API: stay near today some of the time so the value is plausible.
      return random.chance(0.5) ? random.pick(int64Edges) : BigInt(Math.floor(Date.now() / 1000) + random.range(-1e8, 1e8));
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return random.pick(uint64Edges);
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return random.chance(0.6) ? random.pick(floatEdges) : random.next() * 1e6;
  }
}

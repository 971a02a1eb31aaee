import type { SeededRandom } from "./seeded-random.ts";

/**
 * Damage to a protobuf binary encoding, the kinds a broken or hostile client
 * sends: cut short, bits flipped, and well-formed-looking fields that the
 * decoder must refuse (tag 0, wire types 6 and 7, a group never closed, a
 * length past the end, a varint of eleven bytes, invalid UTF-8 in a string).
 * Each returns new bytes and a short name for reports.
 */
export interface Mutation {
  name: string;
  bytes: Buffer;
}

const varint = (value: number): Buffer => {
  const out: number[] = [];
  let v = value;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
};

const tag = (fieldNumber: number, wireType: number): Buffer => varint(fieldNumber * 8 + wireType);

/** A field that is valid on the wire but unknown to the schema (numbers far above any declared one). */
function unknownField(random: SeededRandom): Buffer {
  const fieldNumber = random.pick([15, 16, 1000, 536_870_911]);
  switch (random.int(4)) {
    case 0:
      return Buffer.concat([tag(fieldNumber, 0), varint(random.int(1_000_000))]);
    case 1:
      return Buffer.concat([tag(fieldNumber, 1), random.bytes(8)]);
    case 2: {
      const payload = random.bytes(random.range(0, 40));
      return Buffer.concat([tag(fieldNumber, 2), varint(payload.length), payload]);
    }
    default:
      return Buffer.concat([tag(fieldNumber, 5), random.bytes(4)]);
  }
}

const mutations: readonly (readonly [number, (bytes: Buffer, random: SeededRandom) => Mutation])[] = [
  [3, (b, r) => ({ name: "truncated", bytes: b.subarray(0, b.length ? r.int(b.length) : 0) })],
  [
    3,
    (b, r) => {
      const out = Buffer.from(b.length ? b : Buffer.alloc(1));
      for (let i = r.range(1, 8); i > 0; i--) out[r.int(out.length)]! ^= 1 << r.int(8);
      return { name: "bits flipped", bytes: out };
    },
  ],
  [2, (b, r) => ({ name: "unknown field appended", bytes: Buffer.concat([b, unknownField(r)]) })],
  [1, (b, r) => ({ name: "unknown field prepended", bytes: Buffer.concat([unknownField(r), b]) })],
  [1, (b) => ({ name: "tag 0", bytes: Buffer.concat([b, Buffer.from([0x00])]) })],
  [1, (b, r) => ({ name: "wire type 6 or 7", bytes: Buffer.concat([b, tag(r.range(1, 20), r.pick([6, 7])), Buffer.from([1])]) })],
  [1, (b, r) => ({ name: "unclosed group", bytes: Buffer.concat([b, tag(r.range(1, 20), 3)]) })],
  [1, (b, r) => ({ name: "stray end-group", bytes: Buffer.concat([b, tag(r.range(1, 20), 4)]) })],
  [1, (b, r) => ({ name: "length past the end", bytes: Buffer.concat([b, tag(r.range(1, 6), 2), varint(r.pick([5, 1000, 2 ** 31 - 1])), Buffer.from("ab")]) })],
  [1, (b) => ({ name: "eleven-byte varint", bytes: Buffer.concat([b, tag(2, 0), Buffer.alloc(10, 0xff), Buffer.from([0x01])]) })],
  [1, (b) => ({ name: "varint cut short", bytes: Buffer.concat([b, tag(2, 0), Buffer.from([0xff, 0xff])]) })],
  [
    2,
    (b, r) => {
      // Field numbers 1-6 are strings in most of this API's requests: bytes that are not UTF-8 in a string field.
      const bad = r.pick([Buffer.from([0xff, 0xfe]), Buffer.from([0xc3]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from("a\u0000b")]);
      return { name: "invalid UTF-8 string", bytes: Buffer.concat([b, tag(r.range(1, 6), 2), varint(bad.length), bad]) };
    },
  ],
  [1, (b) => ({ name: "field repeated", bytes: Buffer.concat([b, b]) })],
  [1, (b, r) => ({ name: "random bytes inserted", bytes: Buffer.concat([b.subarray(0, r.int(b.length + 1)), r.bytes(r.range(1, 8)), b.subarray(r.int(b.length + 1))]) })],
];

export function mutateProtobuf(bytes: Uint8Array, random: SeededRandom): Mutation {
  return random.weighted(mutations)(Buffer.from(bytes), random);
}

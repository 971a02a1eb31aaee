import { create, ScalarType, toJsonString, type DescField, type DescMessage } from "@bufbuild/protobuf";
import {
  DescriptorProtoSchema,
  DurationSchema,
  EmptySchema,
  FieldMaskSchema,
  FileDescriptorSetSchema,
  Int64ValueSchema,
  StringValueSchema,
  TimestampSchema,
  UninterpretedOptionSchema,
} from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import * as errorDetails from "../../gen/google/rpc/error_details_pb.ts";
import * as certificateContent from "../../gen/service/verify/v2/certificate_content_pb.ts";
import * as certificate from "../../gen/service/verify/v2/certificate_pb.ts";
import * as certificateService from "../../gen/service/verify/v2/certificate_service_pb.ts";
import * as errors from "../../gen/service/verify/v2/errors_pb.ts";
import * as mockService from "../../gen/service/verify/v2/mock_service_pb.ts";
import * as serverInfo from "../../gen/service/verify/v2/server_info_pb.ts";
import * as verificationService from "../../gen/service/verify/v2/verification_service_pb.ts";
import { messageJson } from "../../src/server/connect-protocol/message-json.ts";
import { SeededRandom } from "../support/seeded-random.ts";

/** Every message type of the service's own files, and of google.rpc's error details. */
const serviceTypes: DescMessage[] = [certificateContent, certificate, certificateService, errors, mockService, serverInfo, verificationService, errorDetails]
  .flatMap((file) => Object.values(file))
  .filter((value): value is DescMessage => typeof value === "object" && value !== null && (value as { kind?: string }).kind === "message");

/**
 * protobuf's own descriptor types: proto2 (explicit presence with defaults on
 * the prototype), 64-bit integers, doubles, bytes, packed lists, recursion.
 */
const protobufTypes: DescMessage[] = [FileDescriptorSetSchema, DescriptorProtoSchema, UninterpretedOptionSchema];

type Random = SeededRandom;

const strings = ["", "a", "plain text", 'quote " backslash \\ slash /', "line\nbreak\ttab", "\u0000\u001f\u007f", "\u2028\u2029", "ü日本語", "😀", "\ud800"];
const doubles = [0, -0, 1, -1.5, 0.1, 1e21, -1e-7, 5e-324, Number.MAX_VALUE, NaN, Infinity, -Infinity];

function scalarValue(r: Random, scalar: ScalarType): unknown {
  switch (scalar) {
    case ScalarType.STRING:
      return r.pick(strings);
    case ScalarType.BOOL:
      return r.chance(0.5);
    case ScalarType.BYTES:
      return Uint8Array.from({ length: r.int(6) }, () => r.int(256));
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return r.pick(doubles);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return r.pick([0n, 1n, -1n, 9_007_199_254_740_993n, -9_223_372_036_854_775_808n, 9_223_372_036_854_775_807n]);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return r.pick([0n, 1n, 18_446_744_073_709_551_615n]);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return r.pick([0, 1, 4_294_967_295]);
    default:
      return r.pick([0, 1, -1, 2_147_483_647, -2_147_483_648, 42]);
  }
}

/** The well-known types with a JSON form of their own (the descriptor types are plain messages). */
const wellKnownJson = /^google\.protobuf\.(Any|Timestamp|Duration|FieldMask|Struct|Value|ListValue|Empty|(Double|Float|Int64|UInt64|Int32|UInt32|Bool|String|Bytes)Value)$/;

/** What a writer gives for a message: its text, or the error it throws (a required field unset). */
function outcome(write: () => string): string {
  try {
    return `text ${write()}`;
  } catch (error) {
    return `error ${(error as Error).message}`;
  }
}

/** A well-known type's content that protobuf-es can write (an Any or Struct would need more than random bytes). */
function wellKnownValue(r: Random, desc: DescMessage): object | undefined {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp": {
      const seconds = r.pick([0n, 1n, 1_700_000_000n, -62_135_596_800n, 253_402_300_799n, 1_790_000_000n]);
      const nanos = r.pick([0, 1, 999_999_999, 500_000_000, 123_000_000, 123_456_000, 123_456_789]);
      return { seconds, nanos };
    }
    case "google.protobuf.Duration": {
      const seconds = BigInt(r.int(1000));
      return { seconds, nanos: seconds === 0n ? r.pick([0, 5, -5]) : r.pick([0, 1_000_000, 999_999_999]) };
    }
    default:
      return undefined;
  }
}

function message(r: Random, desc: DescMessage, depth: number): object {
  const init: Record<string, unknown> = {};
  const chosenOneofs = new Set<string>();
  for (const field of desc.fields) {
    // proto2's required fields are nearly always set, so that most messages can be written at all.
    if (!r.chance(field.presence === 3 ? 0.97 : depth > 3 ? 0.3 : 0.7)) continue;
    const value = fieldValue(r, field, depth);
    if (value === undefined) continue;
    if (field.oneof) {
      if (chosenOneofs.has(field.oneof.localName)) continue;
      chosenOneofs.add(field.oneof.localName);
      init[field.oneof.localName] = { case: field.localName, value };
    } else {
      init[field.localName] = value;
    }
  }
  return create(desc, init as never);
}

function singleValue(r: Random, field: DescField, kind: "scalar" | "enum" | "message", depth: number): unknown {
  if (kind === "scalar") return scalarValue(r, field.scalar!);
  if (kind === "enum") {
    // Sometimes a number the enum does not name: written as the number.
    return r.chance(0.15) ? 77 : r.pick(field.enum!.values).number;
  }
  const desc = field.message!;
  if (wellKnownJson.test(desc.typeName)) return wellKnownValue(r, desc);
  return depth > 5 ? create(desc) : message(r, desc, depth + 1);
}

function fieldValue(r: Random, field: DescField, depth: number): unknown {
  switch (field.fieldKind) {
    case "list": {
      const items = Array.from({ length: r.int(4) }, () => singleValue(r, field, field.listKind, depth));
      return items.includes(undefined) ? undefined : items;
    }
    case "map": {
      const entries: Record<string, unknown> = {};
      for (let i = r.int(4); i > 0; i--) {
        const key = field.mapKey === ScalarType.STRING ? r.pick(strings) : String(r.int(100));
        const value = singleValue(r, field, field.mapKind, depth);
        if (value !== undefined) entries[key] = value;
      }
      return entries;
    }
    default:
      return singleValue(r, field, field.fieldKind, depth);
  }
}

describe("messageJson writes what toJsonString writes", () => {
  for (const desc of [...serviceTypes, ...protobufTypes]) {
    it(desc.typeName, () => {
      for (let seed = 1; seed <= 200; seed++) {
        const msg = message(new SeededRandom("message-json", desc.typeName, seed), desc, 0) as never;
        expect(outcome(() => messageJson(desc)(msg)), `seed ${seed}`).toBe(outcome(() => toJsonString(desc, msg)));
      }
      expect(messageJson(desc)(create(desc) as never)).toBe(toJsonString(desc, create(desc)));
    });
  }

  it("covers the service's own answers and every kind of field", () => {
    expect(serviceTypes.map((d) => d.typeName)).toEqual(
      expect.arrayContaining(["service.verify.v2.BatchCheckCertificateStatusResponse", "service.verify.v2.VerifyResponse", "google.rpc.ErrorInfo"]),
    );
    const kinds = new Set(
      [...serviceTypes, ...protobufTypes].flatMap((d) =>
        d.fields.map((f) => (f.fieldKind === "scalar" ? `scalar ${ScalarType[f.scalar]}` : f.fieldKind === "list" ? `list ${f.listKind}` : f.fieldKind)),
      ),
    );
    for (const kind of ["scalar STRING", "scalar BOOL", "scalar BYTES", "scalar INT32", "scalar INT64", "scalar UINT64", "scalar DOUBLE", "enum", "message", "map", "list message", "list scalar", "list enum"]) {
      expect(kinds, kind).toContain(kind);
    }
  });

  it("writes well-known types as protobuf-es does, and refuses what it refuses", () => {
    const cases: [DescMessage, object][] = [
      [TimestampSchema, { seconds: 1_700_000_000n, nanos: 120_000_000 }],
      [TimestampSchema, { seconds: 0n, nanos: 1 }],
      [DurationSchema, { seconds: -3n, nanos: -500_000_000 }],
      [FieldMaskSchema, { paths: ["a.b_c", "d"] }],
      [Int64ValueSchema, { value: 5n }],
      [StringValueSchema, { value: "x" }],
      [EmptySchema, {}],
    ];
    for (const [desc, init] of cases) {
      const msg = create(desc, init as never);
      expect(messageJson(desc)(msg as never)).toBe(toJsonString(desc, msg));
    }
    // proto2's required: a name part without its flag.
    const partial = create(UninterpretedOptionSchema, { name: [{ namePart: "x" }] as never });
    expect(() => toJsonString(UninterpretedOptionSchema, partial)).toThrow(/is_extension.*required field not set/);
    expect(() => messageJson(UninterpretedOptionSchema)(partial as never)).toThrow(/is_extension.*required field not set/);
    const outOfRange = create(TimestampSchema, { seconds: 253_402_300_800n });
    expect(() => toJsonString(TimestampSchema, outOfRange)).toThrow(/must be from 0001-01-01/);
    expect(() => messageJson(TimestampSchema)(outOfRange as never)).toThrow(/must be from 0001-01-01/);
  });

  it("keeps each instant apart when writing many in a row", () => {
    const desc = TimestampSchema;
    for (let ms = 1_790_000_000_000; ms < 1_790_000_000_300; ms += 1) {
      const msg = create(desc, { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 });
      expect(messageJson(desc)(msg as never)).toBe(toJsonString(desc, msg));
    }
  });
});

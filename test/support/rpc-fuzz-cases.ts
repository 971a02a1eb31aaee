import { gzipSync } from "node:zlib";
import { toBinary, toJson, type DescMessage } from "@bufbuild/protobuf";
import type { FuzzCase } from "./fuzz-case.ts";
import type { FuzzTarget } from "./fuzz-target.ts";
import { mutateJson } from "./json-mutations.ts";
import { mutateProtobuf } from "./protobuf-mutations.ts";
import { randomMessage } from "./random-messages.ts";
import { envelope } from "./rpc-envelopes.ts";
import type { Procedure } from "./rpc-procedures.ts";
import type { SeededRandom } from "./seeded-random.ts";

/**
 * One request to an RPC procedure in one of the wire protocols the server
 * speaks (Connect binary and JSON, Connect GET, gRPC, gRPC-Web; HTTP/1.1 or
 * h2c), with a valid, missing or bad API token, and a body that is random,
 * valid, or a valid message damaged (see protobuf-mutations.ts and
 * json-mutations.ts), sometimes in a damaged envelope or with odd headers.
 */
type Style = "connect-proto" | "connect-json" | "connect-get" | "grpc" | "grpc-web";

interface Payload {
  name: string;
  bytes: Buffer;
}

function authorization(target: FuzzTarget, random: SeededRandom): { name: string; header?: string } {
  return random.weighted<() => { name: string; header?: string }>([
    [6, () => ({ name: "valid token", header: `Bearer ${target.apiToken}` })],
    [2, () => ({ name: "no token" })],
    [1, () => ({ name: "unknown token", header: `Bearer ${random.text(random.range(1, 80), "abcdefghijklmnopqrstuvwxyz0123456789_-.")}` })],
    [1, () => ({ name: "token one character off", header: `Bearer ${target.apiToken.slice(0, -1)}${target.apiToken.endsWith("A") ? "B" : "A"}` })],
    [1, () => ({ name: "malformed authorization", header: random.pick(["Bearer", "Bearer ", "Basic Zm9vOmJhcg==", "bearer  x", "Token x", "Bearer a b", "x".repeat(6000), "Bearer \u00e9\u00ff"]) })],
  ])();
}

function binaryPayload(schema: DescMessage, target: FuzzTarget, random: SeededRandom): Payload {
  const valid = () => toBinary(schema, randomMessage(schema, random, target.ids));
  return random.weighted<() => Payload>([
    [3, () => ({ name: "random bytes", bytes: random.bytes(random.weighted([[3, random.range(1, 16)], [2, random.range(17, 300)], [1, 0]] as const)) })],
    [2, () => ({ name: "valid random message", bytes: Buffer.from(valid()) })],
    [5, () => mutateProtobuf(valid(), random)],
    [1, () => ({ name: "oversize", bytes: random.bytes(target.maxBodyBytes + random.range(1, target.maxBodyBytes)) })],
  ])();
}

function jsonPayload(schema: DescMessage, target: FuzzTarget, random: SeededRandom): Payload {
  return random.weighted<() => Payload>([
    [
      9,
      () => {
        const message = randomMessage(schema, random, target.ids);
        let json: Record<string, unknown>;
        try {
          json = toJson(schema, message) as Record<string, unknown>;
        } catch {
          json = {}; // A random value JSON cannot express (a timestamp past year 9999): start from an empty request.
        }
        return mutateJson(json, schema, random);
      },
    ],
    [1, () => ({ name: "random bytes", bytes: random.bytes(random.range(0, 64)) })],
    [1, () => ({ name: "oversize", bytes: Buffer.from(JSON.stringify({ certificateId: "x".repeat(target.maxBodyBytes + random.range(1, 1000)) })) })],
  ])();
}

/** The body of a gRPC or gRPC-Web request: mostly one proper envelope, sometimes a damaged one. */
function envelopes(payload: Buffer, random: SeededRandom, headers: Record<string, string>): { name: string; body: Buffer } {
  return random.weighted<() => { name: string; body: Buffer }>([
    [8, () => ({ name: "one envelope", body: envelope(payload) })],
    [1, () => ({ name: "compressed flag, no encoding", body: envelope(payload, 1) })],
    [
      1,
      () => {
        headers["grpc-encoding"] = "gzip";
        return random.chance(0.5)
          ? { name: "gzip envelope", body: envelope(gzipSync(payload), 1) }
          : { name: "gzip flag, not gzip", body: envelope(payload, 1) };
      },
    ],
    [1, () => ({ name: "length too long", body: envelope(payload, 0, payload.length + random.range(1, 100)) })],
    [1, () => ({ name: "length too short", body: envelope(payload, 0, Math.max(0, payload.length - random.range(1, 5))) })],
    [1, () => ({ name: "length 4 GiB", body: envelope(payload, 0, 0xffffffff) })],
    [1, () => ({ name: "two envelopes", body: Buffer.concat([envelope(payload), envelope(payload)]) })],
    [1, () => ({ name: "no envelope", body: Buffer.alloc(0) })],
    [1, () => ({ name: "partial header", body: envelope(payload).subarray(0, random.range(1, 4)) })],
    [1, () => ({ name: "trailer flag", body: envelope(payload, 0x80) })],
    [1, () => ({ name: "unknown flags", body: envelope(payload, random.pick([0x02, 0x7e, 0xff])) })],
  ])();
}

const timeouts = ["1", "0", "-1", "abc", "99999999999", "1.5", ""];

export function rpcCase(target: FuzzTarget, random: SeededRandom): FuzzCase {
  const procedure: Procedure = random.pick(target.procedures);
  const schema = procedure.method.input;
  const styles: (readonly [number, Style])[] = [
    [3, "connect-proto"],
    [3, "connect-json"],
    [2, "grpc"],
    [2, "grpc-web"],
  ];
  if (procedure.getAllowed) styles.push([1, "connect-get"]);
  const style = random.weighted(styles);
  const transport = style === "grpc" ? "h2c" : random.pick(["http1", "h2c"] as const);
  const auth = authorization(target, random);
  const headers: Record<string, string> = {};
  if (auth.header !== undefined) headers.authorization = auth.header;
  const json = style === "connect-json" || ((style === "grpc" || style === "grpc-web" || style === "connect-get") && random.chance(0.25));
  const payload = json ? jsonPayload(schema, target, random) : binaryPayload(schema, target, random);
  const notes = [style, transport, auth.name, payload.name];
  let path = procedure.path;
  let method = "POST";
  let body: Buffer | undefined;

  switch (style) {
    case "connect-proto":
    case "connect-json": {
      headers["content-type"] = random.chance(0.9) ? (json ? "application/json" : "application/proto") : random.pick(["application/json; charset=utf-8", "application/proto; charset=utf-8", "text/plain", "application/octet-stream", "application/connect+proto", ""]);
      if (random.chance(0.7)) headers["connect-protocol-version"] = random.chance(0.9) ? "1" : random.pick(["2", "0", "x"]);
      body = payload.bytes;
      if (random.chance(0.08)) {
        headers["content-encoding"] = random.pick(["gzip", "br", "deflate", "zstd"]);
        const garbage = random.chance(0.5);
        body = headers["content-encoding"] === "gzip" && !garbage ? gzipSync(payload.bytes) : payload.bytes;
        notes.push(`content-encoding ${headers["content-encoding"]}${garbage ? " (not encoded)" : ""}`);
      }
      break;
    }
    case "grpc":
    case "grpc-web": {
      const base = style === "grpc" ? "application/grpc" : "application/grpc-web";
      headers["content-type"] = json ? `${base}+json` : random.pick([base, `${base}+proto`, `${base}+proto`, random.chance(0.3) ? `${style === "grpc" ? "application/grpc-web-text" : "application/grpc"}` : base]);
      if (style === "grpc") headers.te = "trailers";
      else headers["x-grpc-web"] = "1";
      const framed = envelopes(payload.bytes, random, headers);
      notes.push(framed.name);
      body = framed.body;
      break;
    }
    case "connect-get": {
      method = "GET";
      const base64 = !json || random.chance(0.3);
      // Standard base64 is sent unescaped on purpose: its "+" arrives as a space. Some messages are not base64 at all.
      const message = base64
        ? random.chance(0.1)
          ? random.pick(["e", "%%%", "a%20b", "====", "AAA*", "%zz", "%C3%A9"])
          : payload.bytes.toString(random.chance(0.8) ? "base64url" : "base64")
        : encodeURIComponent(payload.bytes.toString("utf8"));
      const query = [
        random.chance(0.9) ? "connect=v1" : random.pick(["connect=v2", "connect=", ""]),
        `encoding=${json ? "json" : random.chance(0.9) ? "proto" : random.pick(["xml", "", "proto%zz"])}`,
        `message=${message}`,
        base64 ? "base64=1" : "",
        random.chance(0.1) ? random.pick(["compression=gzip", "compression=br", "compression=x"]) : "",
      ].filter(Boolean);
      path = `${procedure.path}?${query.join("&")}`;
      break;
    }
  }
  if (random.chance(0.05)) {
    const name = style === "grpc" || style === "grpc-web" ? "grpc-timeout" : "connect-timeout-ms";
    headers[name] = random.pick(timeouts) + (name === "grpc-timeout" ? random.pick(["S", "m", "H", "x", ""]) : "");
    notes.push(`${name} ${headers[name]}`);
  }
  if (random.chance(0.03)) {
    method = random.pick(["PUT", "DELETE", "PATCH", "OPTIONS", "GET"]);
    notes.push(`method ${method}`);
  }
  if (random.chance(0.02)) {
    path = procedure.path.replace(/\/[^/]+$/, `/${random.pick(["NoSuchMethod", "", "getCertificate", "%zz"])}`);
    notes.push("unknown method name");
  }
  // Over HTTP/2 a header block above the 64 KiB the server accepts is refused at the protocol level
  // (RST_STREAM, before any application code runs); such long GETs go over HTTP/1.1, which answers 431.
  const sentOver = transport === "h2c" && path.length > 60_000 ? "http1" : transport;
  if (sentOver !== transport) notes.push("sent over http1: URL too long for h2c");
  return {
    transport: sentOver,
    method,
    path,
    headers,
    ...(body !== undefined && method !== "GET" && method !== "OPTIONS" ? { body } : {}),
    protocol: style === "connect-proto" || style === "connect-json" ? "connect" : style,
    route: procedure.path,
    description: notes.join(", "),
  };
}

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { FuzzCase } from "../support/fuzz-case.ts";
import { judge } from "../support/fuzz-verdict.ts";
import { revealedInternals } from "../support/leak-patterns.ts";
import type { RawReply } from "../support/raw-client.ts";
import { envelope } from "../support/rpc-envelopes.ts";
import { SeededRandom } from "../support/seeded-random.ts";

/** The fuzz test is only as good as its judgement of an answer: these check that judgement on known answers. */
const connectCase: FuzzCase = { transport: "http1", method: "POST", path: "/x.S/M", headers: {}, protocol: "connect", route: "/x.S/M", description: "" };
const grpcCase: FuzzCase = { ...connectCase, transport: "h2c", protocol: "grpc" };
const grpcWebCase: FuzzCase = { ...connectCase, protocol: "grpc-web" };
const httpCase: FuzzCase = { ...connectCase, protocol: "http", route: "POST /api/oidc/v1/token" };

const reply = (status: number, body: string | Buffer, headers: RawReply["headers"] = {}, trailers: RawReply["trailers"] = {}): RawReply => ({
  status,
  headers,
  trailers,
  body: typeof body === "string" ? Buffer.from(body) : body,
});
const json = { "content-type": "application/json" };

describe("judging one answer", () => {
  it("a Connect internal error is a 5xx, a failure code and, with the decoder's words, a leak", () => {
    const verdict = judge(connectCase, reply(500, '{"code":"internal","message":"parse binary: illegal tag: field no 0 wire type 0"}', json));
    expect(verdict.problems).toEqual(["HTTP 500", "Connect code internal", "reveals internals (protobuf decoder text)"]);
    expect(verdict.code).toBe("internal");
    expect(verdict.message).toBe("parse binary: illegal tag: field no 0 wire type 0");
  });

  it("a Connect unknown error is a failure code; an unimplemented one is a 5xx", () => {
    expect(judge(connectCase, reply(500, '{"code":"unknown","message":"x"}', json)).problems).toEqual(["HTTP 500", "Connect code unknown"]);
    expect(judge(connectCase, reply(501, '{"code":"unimplemented","message":"x"}', json)).problems).toEqual(["HTTP 501"]);
  });

  it("clean refusals pass", () => {
    expect(judge(connectCase, reply(400, '{"code":"invalid_argument","message":"certificate_id must be a UUID"}', json)).problems).toEqual([]);
    expect(judge(grpcCase, reply(200, "", {}, { "grpc-status": "3", "grpc-message": "certificate_id%20must%20be%20a%20UUID" })).problems).toEqual([]);
    expect(judge(httpCase, reply(401, '{"error":"invalid_client"}', json)).problems).toEqual([]);
  });

  it("gRPC status 13 in trailers, or 2 in a trailers-only answer, is a failure", () => {
    expect(judge(grpcCase, reply(200, "", {}, { "grpc-status": "13", "grpc-message": "internal%20error" })).problems).toEqual(["gRPC status 13 INTERNAL"]);
    expect(judge(grpcCase, reply(200, "", { "grpc-status": "2" })).problems).toEqual(["gRPC status 2 UNKNOWN"]);
  });

  it("gRPC-Web status in the body's trailer envelope is read, and its message checked for leaks", () => {
    const trailer = envelope(Buffer.from("grpc-status: 13\r\ngrpc-message: received%20compressed%20envelope%2C%20but%20do%20not%20know%20how%20to%20decompress\r\n"), 0x80);
    const verdict = judge(grpcWebCase, reply(200, Buffer.concat([envelope(Buffer.from([8, 1])), trailer])));
    expect(verdict.code).toBe("13");
    expect(verdict.problems).toEqual(["gRPC status 13 INTERNAL", "reveals internals (Connect framing text)"]);
  });

  it("a gRPC answer with HTTP 200 and no status at all is a failure", () => {
    expect(judge(grpcCase, reply(200, "")).problems).toEqual(["gRPC answer without grpc-status"]);
  });

  it("an Express 500 page with a stack trace is both", () => {
    const page = "<pre>TypeError: Cannot read properties of undefined (reading 'x')\n    at handle (/srv/app/src/http/routes/oidc/token.ts:20:5)</pre>";
    expect(judge(httpCase, reply(500, page, { "content-type": "text/html" })).problems).toEqual(["HTTP 500", "reveals internals (stack trace)"]);
  });
});

describe("leak patterns", () => {
  const leaks: [string, string][] = [
    ["    at Object.<anonymous> (/app/dist/server.js:1:1)", "stack trace"],
    ['{"error":"x","stack":"Error: y\\n    at z (node:internal/process/task_queues:95:5)"}', "stack trace"],
    ["failed in /work/app/src/storage/database.ts", "source path"],
    ["/app/node_modules/pg/lib/client.js", "dependency path"],
    ["RangeError: Invalid time value", "JavaScript error class"],
    ["x is not a function", "V8 error text"],
    ["code ERR_INVALID_ARG_TYPE", "Node error code"],
    ["SqliteError: SQLITE_CONSTRAINT_UNIQUE", "SQLite error"],
    ["UNIQUE constraint failed: accounts.name", "SQLite error"],
    ['invalid byte sequence for encoding "UTF8": 0x00', "PostgreSQL error"],
    ['duplicate key value violates unique constraint "x"', "PostgreSQL error"],
    ['syntax error at or near "where"', "PostgreSQL error"],
    ["parse binary: premature EOF", "protobuf decoder text"],
    ["received compressed envelope, but do not know how to decompress", "Connect framing text"],
  ];
  for (const [text, name] of leaks) {
    it(`finds ${name} in ${JSON.stringify(text.slice(0, 50))}`, () => {
      expect(revealedInternals(text)).toBe(name);
    });
  }

  it("finds nothing in what shomei legitimately sends: tokens, PEM, ids, error texts, pages", () => {
    const pem = `-----BEGIN CERTIFICATE-----\n${randomBytes(1500).toString("base64").replace(/.{64}/g, "$&\n")}\n-----END CERTIFICATE-----\n`;
    const clean = [
      pem,
      JSON.stringify({ access_token: randomBytes(32).toString("base64url"), token_type: "Bearer", expires_in: 3600 }),
      '{"code":"invalid_argument","message":"cannot decode field service.verify.v2.GetCertificateRequest.certificate_id from JSON: 5"}',
      '{"error":"invalid_request","error_description":"redirect_uri is not registered for this client"}',
      "<!doctype html><title>Sign in</title><form method=post action=/auth/login?interaction=abc><input name=csrf value=x></form>",
      "the request body exceeds the limit of 16384 bytes",
    ];
    for (const text of clean) expect(revealedInternals(text), text.slice(0, 80)).toBeUndefined();
  });
});

describe("seeded random", () => {
  it("repeats its sequence for a seed and differs between seeds and streams", () => {
    const draw = (...seed: (string | number)[]) => {
      const random = new SeededRandom(...seed);
      return Array.from({ length: 20 }, () => random.int(1_000_000));
    };
    expect(draw("s", "sqlite", 7)).toEqual(draw("s", "sqlite", 7));
    expect(draw("s", "sqlite", 7)).not.toEqual(draw("s", "sqlite", 8));
    expect(draw("s", "sqlite", 7)).not.toEqual(draw("t", "sqlite", 7));
  });

  it("spreads ints over their whole range", () => {
    const random = new SeededRandom("spread");
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++) counts[random.int(10)]!++;
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });
});

import type { FuzzCase } from "./fuzz-case.ts";
import type { FuzzTarget } from "./fuzz-target.ts";
import type { SeededRandom } from "./seeded-random.ts";

/** What a nested-JSON case must be answered with: the status, and the error's code and words. */
export interface NestedJsonExpectation {
  status: number;
  error: Record<string, string>;
}

/**
 * JSON nested far past the 64-level limit, filling up to `maxBytes`: arrays,
 * objects, or both in turn, sometimes behind a valid prefix or with strings
 * of brackets that do not count. Sent as a Connect JSON body to any RPC
 * procedure (over HTTP/1.1 or h2c, with a valid token), or as PAR's
 * authorization_details (over HTTP/1.1).
 */
export function nestedJsonCase(target: FuzzTarget, random: SeededRandom, maxBytes: number): { fuzzCase: FuzzCase; expected: NestedJsonExpectation } {
  const transport = random.pick(["http1", "h2c"] as const);
  if (random.chance(0.75)) {
    const procedure = random.pick(target.procedures.filter((p) => p.method.methodKind === "unary"));
    const budget = maxBytes - 200;
    const body = Buffer.from(`{${random.chance(0.3) ? `"ignored":"[[[[{{{{",` : ""}"x":${nested(random, budget)}}`);
    return {
      fuzzCase: {
        transport,
        protocol: "connect",
        method: "POST",
        path: procedure.path,
        route: procedure.path,
        description: `nested JSON, ${body.length} bytes`,
        headers: { "content-type": "application/json", authorization: `Bearer ${target.apiToken}`, "content-length": String(body.length) },
        body,
      },
      expected: { status: 400, error: { code: "invalid_argument", message: "the JSON request nests arrays and objects more than 64 levels deep" } },
    };
  }
  // Form-encoded, each bracket takes three bytes. Over HTTP/1.1 only: over HTTP/2 the form goes through
  // Express's urlencoded parser (qs), which itself takes 20-50 ms over a megabyte of escaped brackets.
  const formTransport = "http1";
  const details = nested(random, Math.floor((maxBytes - 400) / 3));
  const form = new URLSearchParams({ response_type: "code", redirect_uri: target.redirectUri, scope: "openid", state: "s", authorization_details: details });
  const body = Buffer.from(form.toString());
  return {
    fuzzCase: {
      transport: formTransport,
      protocol: "http",
      method: "POST",
      path: "/api/oidc/v1/par",
      route: "POST /api/oidc/v1/par",
      description: `nested authorization_details, ${body.length} bytes`,
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "content-length": String(body.length),
        authorization: `Basic ${Buffer.from(`${target.clientId}:${target.clientSecret}`).toString("base64")}`,
      },
      body,
    },
    expected: { status: 400, error: { error: "invalid_request", error_description: "authorization_details nests arrays and objects more than 64 levels deep" } },
  };
}

/** About `bytes` characters of arrays or objects nested as deep as they fit (at least 65 levels). */
function nested(random: SeededRandom, bytes: number): string {
  const shape = random.pick(["arrays", "objects", "mixed"] as const);
  const open = shape === "arrays" ? "[" : shape === "objects" ? '{"a":' : '[{"a":';
  const close = shape === "arrays" ? "]" : shape === "objects" ? "}" : "}]";
  const depth = Math.max(65, Math.floor(bytes / (open.length + close.length)) - random.int(100));
  return open.repeat(depth) + (shape === "arrays" ? "" : "1") + close.repeat(depth);
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { RawClient } from "../support/raw-client.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const formType = "application/x-www-form-urlencoded";
const maxBodyBytes = 4096;

/** Forms whose answer depends on what the body holds: an unread body gets another answer. */
const forms = [
  { path: "/api/oidc/v1/token", body: "grant_type=client_credentials&client_id=nobody&client_secret=wrong" },
  { path: "/api/oidc/v1/par", body: "client_id=nobody&client_secret=wrong&response_type=code" },
  { path: "/api/oidc/v1/revoke", body: "client_id=nobody&client_secret=wrong&token=abc" },
  { path: "/api/oidc/v1/introspect", body: "client_id=nobody&client_secret=wrong&token=abc" },
  { path: "/api/oidc/v1/token", body: "grant_type=unheard_of" },
];

// HTTP/2 ends a body with the stream (END_STREAM), so a length is optional (RFC 9113 §8.1.1); Node's
// client, like Go's net/http or curl with a streamed body, sends none unless told to.
describe("form posts over h2c without a Content-Length", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  let client: RawClient;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url, { maxBodyBytes, sweepIntervalSeconds: 0 });
    client = new RawClient(server.url, 10_000);
  });

  afterAll(async () => {
    client?.close();
    await server?.close();
    await scratch?.drop();
  });

  it.each(forms)("$path ($body) is read as it is with a length", async ({ path, body }) => {
    const bytes = Buffer.from(body);
    const withLength = await client.send({ transport: "http1", method: "POST", path, headers: { "content-type": formType, "content-length": String(bytes.length) }, body: bytes });
    const withoutLength = await client.send({ transport: "h2c", method: "POST", path, headers: { "content-type": formType }, body: bytes });
    expect({ status: withoutLength.status, body: withoutLength.body.toString("utf8") }).toEqual({ status: withLength.status, body: withLength.body.toString("utf8") });
    // An answer about the client or the grant, not about a missing form.
    expect(withoutLength.status).not.toBe(500);
    expect(withoutLength.body.toString("utf8")).not.toMatch(/form|body|content-type/i);
  });

  it("refuses an oversized form without a length with the 413 a declared one gets", async () => {
    const bytes = Buffer.from(`client_id=nobody&pad=${"b".repeat(maxBodyBytes * 4)}`);
    const path = "/api/oidc/v1/par";
    const declared = await client.send({ transport: "h2c", method: "POST", path, headers: { "content-type": formType, "content-length": String(bytes.length) }, body: bytes });
    const undeclared = await client.send({ transport: "h2c", method: "POST", path, headers: { "content-type": formType }, body: bytes });
    expect(JSON.parse(declared.body.toString("utf8"))).toEqual({ error: "request_too_large", error_description: `the request body exceeds the limit of ${maxBodyBytes} bytes` });
    expect({ status: undeclared.status, body: undeclared.body.toString("utf8") }).toEqual({ status: 413, body: declared.body.toString("utf8") });
  });

  it("refuses an oversized page form without a length as HTTP/1.1 refuses it chunked", async () => {
    // A page's form has a limit of its own (16 KB); a body of unknown length meets it before the server's.
    const bytes = Buffer.from(`login_id=someone&pad=${"b".repeat(64 * 1024)}`);
    const path = "/auth/login?interaction=unknown";
    const chunked = await client.send({ transport: "http1", method: "POST", path, headers: { "content-type": formType, "transfer-encoding": "chunked" }, body: bytes });
    const undeclared = await client.send({ transport: "h2c", method: "POST", path, headers: { "content-type": formType }, body: bytes });
    expect(chunked.status).toBe(413);
    expect({ status: undeclared.status, body: undeclared.body.toString("utf8") }).toEqual({ status: 413, body: chunked.body.toString("utf8") });
  });

  it("still finds no form in a post whose stream ended with its headers", async () => {
    const reply = await client.send({ transport: "h2c", method: "POST", path: "/api/oidc/v1/token", headers: { "content-type": formType } });
    expect({ status: reply.status, body: JSON.parse(reply.body.toString("utf8")) as unknown }).toEqual({
      status: 400,
      body: { error: "invalid_request", error_description: "the body must be application/x-www-form-urlencoded" },
    });
  });
});

import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeySetFetcher } from "../../src/adapters/http/key-set-fetcher.ts";
import { JwksServer } from "../support/jwks-server.ts";

/**
 * The adapter that reads a client's jwks_uri, against a real server on
 * loopback: a 200 with JSON is the document; a redirect, another status,
 * a body over the limit, a body that is not JSON, a port nobody listens on
 * and, in production mode, plain http and loopback are each an error that
 * names the URI and what went wrong.
 */
const keySet = { keys: [{ kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", kid: "k1" }] };

describe("the key set fetcher", () => {
  let jwks: JwksServer;
  const fetcher = createKeySetFetcher({ allowPrivate: true, timeoutMs: 5000, maxBytes: 64 * 1024 });

  beforeAll(async () => {
    jwks = await new JwksServer().start();
  });

  afterAll(async () => {
    await jwks?.close();
  });

  it("answers the parsed JSON of a 200", async () => {
    jwks.set("/ok", keySet);
    expect(await fetcher.read(jwks.url("/ok"))).toEqual({ document: keySet });
    expect(jwks.requests("/ok")).toBe(1);
  });

  it("does not follow a redirect", async () => {
    jwks.set("/elsewhere", keySet);
    jwks.set("/moved", { status: 302, body: "", headers: { location: jwks.url("/elsewhere") } });
    expect(await fetcher.read(jwks.url("/moved"))).toEqual({ error: `${jwks.url("/moved")}: answered 302; redirects are not followed` });
    expect(jwks.requests("/elsewhere")).toBe(0);
  });

  it("refuses another status, a body that is not JSON, and one over the limit (streamed or declared)", async () => {
    jwks.set("/gone", { status: 404, body: "not here" });
    jwks.set("/html", { status: 200, body: "<html>keys</html>", headers: { "content-type": "text/html" } });
    jwks.set("/huge", { bytes: 64 * 1024 + 1 });
    jwks.set("/declared", { status: 200, body: " ".repeat(200_000), headers: { "content-type": "application/json" } });
    jwks.set("/limit", { status: 200, body: JSON.stringify(keySet).padEnd(64 * 1024, " ") });
    expect(await fetcher.read(jwks.url("/gone"))).toEqual({ error: `${jwks.url("/gone")}: answered 404, not 200` });
    expect(await fetcher.read(jwks.url("/html"))).toEqual({ error: `${jwks.url("/html")}: the answer is not JSON` });
    expect(await fetcher.read(jwks.url("/huge"))).toEqual({ error: `${jwks.url("/huge")}: the key set is larger than 65536 bytes` });
    expect(await fetcher.read(jwks.url("/declared"))).toEqual({ error: `${jwks.url("/declared")}: the key set is larger than 65536 bytes` });
    // Exactly at the limit is read.
    expect(await fetcher.read(jwks.url("/limit"))).toEqual({ document: keySet });
  });

  it("names a refused connection", async () => {
    const closed = await unusedPort();
    expect(await fetcher.read(`http://127.0.0.1:${closed}/jwks`)).toEqual({ error: `http://127.0.0.1:${closed}/jwks: ECONNREFUSED` });
  });

  it("in production mode refuses plain http and loopback without a request", async () => {
    const strict = createKeySetFetcher({ allowPrivate: false, timeoutMs: 5000, maxBytes: 64 * 1024 });
    jwks.set("/strict", keySet);
    expect(await strict.read(jwks.url("/strict"))).toEqual({ error: `${jwks.url("/strict")}: refused: only https:// endpoints are allowed` });
    expect(await strict.read("https://127.0.0.1:1/jwks")).toEqual({ error: "https://127.0.0.1:1/jwks: refused: a loopback, private or link-local address" });
    expect(jwks.requests("/strict")).toBe(0);
  });
});

/** A port that was free a moment ago: nothing listens on it. */
async function unusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

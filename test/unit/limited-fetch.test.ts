import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBody, send } from "../../src/adapters/http/limited-fetch.ts";

/** A body of several megabytes, sent in 64 KB writes, with and without Content-Length. */
const body = randomBytes(10 * 1024 * 1024 + 12_345);
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === "/declared") res.setHeader("content-length", body.length);
    let offset = 0;
    const next = () => {
      while (offset < body.length) {
        const part = body.subarray(offset, offset + 65_536);
        offset += part.length;
        if (!res.write(part)) return void res.once("drain", next);
      }
      res.end();
    };
    next();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const fail = (message: string) => new Error(message);
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("readBody", () => {
  for (const path of ["/declared", "/chunked"]) {
    it(`joins a body of several megabytes exactly (${path.slice(1)})`, async () => {
      const limits = { timeoutMs: 30_000, maxBytes: 64 * 1024 * 1024 };
      const exchange = await send(`${base}${path}`, {}, limits, fail);
      expect(exchange.response.headers.get("content-length")).toBe(path === "/declared" ? String(body.length) : null);
      const read = await readBody(`${base}${path}`, exchange, limits, "the list", fail);
      expect(read.length).toBe(body.length);
      expect(sha256(read)).toBe(sha256(body));
    });
  }

  it("stops at the limit, whether or not the length was declared", async () => {
    const limits = { timeoutMs: 30_000, maxBytes: 5 * 1024 * 1024 };
    for (const path of ["/declared", "/chunked"]) {
      const exchange = await send(`${base}${path}`, {}, limits, fail);
      await expect(readBody(`${base}${path}`, exchange, limits, "the list", fail)).rejects.toThrow(`${base}${path}: the list is larger than the limit of ${limits.maxBytes} bytes`);
    }
  });
});

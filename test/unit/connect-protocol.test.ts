import { readFileSync } from "node:fs";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, createConnectRouter, createContextKey, createContextValues, type Interceptor } from "@connectrpc/connect";
import { compressionGzip } from "@connectrpc/connect-node";
import { createAsyncIterable, readAllBytes, type UniversalHandler } from "@connectrpc/connect/protocol";
import { findTrailerError } from "@connectrpc/connect/protocol-grpc";
import { describe, expect, it } from "vitest";
import { ServerInfoService, GetServerInfoRequestSchema } from "../../gen/service/verify/v2/server_info_pb.ts";
import { answerClientFaults, markReached, reachedImplementation } from "../../src/server/connect-protocol/client-faults.ts";
import { pinnedConnectVersion } from "../../src/server/connect-protocol/pinned-version.ts";

/**
 * src/server/connect-protocol/ relies on how one release of Connect behaves
 * (see pinned-version.ts). These fail when another release is installed, or
 * when the installed one stops behaving so.
 */

function installedVersion(name: string): string {
  const manifest = new URL(`../../node_modules/${name}/package.json`, import.meta.url);
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

const seen = createContextKey("", { description: "test value" });
/** Records whether the interceptors ran and what context value they saw. */
function routerWith(record: { reached?: boolean; value?: string }): UniversalHandler {
  const spy: Interceptor = (next) => (req) => {
    record.value = req.contextValues.get(seen);
    return next(req);
  };
  const router = createConnectRouter({ interceptors: [markReached, spy], acceptCompression: [compressionGzip] });
  router.service(ServerInfoService, { getServerInfo: () => ({}) } as never);
  return router.handlers.find((h) => h.method.name === "GetServerInfo")!;
}

function request(contentType: string, body: Uint8Array, headers: Record<string, string> = {}) {
  const contextValues = createContextValues().set(seen, "given");
  return {
    request: {
      httpVersion: "1.1",
      method: "POST",
      url: `http://localhost/${ServerInfoService.typeName}/GetServerInfo`,
      header: new Headers({ "content-type": contentType, ...headers }),
      body: createAsyncIterable([body]),
      signal: new AbortController().signal,
      contextValues,
    },
    contextValues,
  };
}

describe("the Connect release the protocol folder is written against", () => {
  it("is the installed one, for connect and connect-node alike", () => {
    expect(installedVersion("@connectrpc/connect")).toBe(pinnedConnectVersion);
    expect(installedVersion("@connectrpc/connect-node")).toBe(pinnedConnectVersion);
  });

  it("gives interceptors the context values the request carried, and the values record that they ran", async () => {
    const record: { value?: string } = {};
    const { request: req, contextValues } = request("application/proto", toBinary(GetServerInfoRequestSchema, create(GetServerInfoRequestSchema)));
    const response = await routerWith(record)(req);
    expect(response.status).toBe(200);
    expect(record.value).toBe("given");
    expect(reachedImplementation(contextValues)).toBe(true);
  });

  it("decodes the request before the first interceptor: bytes that do not decode are `internal` and reach none", async () => {
    const record: { value?: string } = {};
    const { request: req, contextValues } = request("application/proto", new Uint8Array([0xff, 0xff, 0xff]));
    const response = await routerWith(record)(req);
    expect(record.value).toBeUndefined();
    expect(reachedImplementation(contextValues)).toBe(false);
    const body = JSON.parse(Buffer.from(await readAllBytes(response.body!, 1 << 20)).toString()) as { code: string };
    expect({ status: response.status, code: body.code }).toEqual({ status: 500, code: "internal" });
    const answered = await answerClientFaults({ ...response, body: createAsyncIterable([Buffer.from(JSON.stringify(body))]) }, "X", ["gzip"], false);
    expect(answered.status).toBe(400);
  });

  it("refuses an unknown content coding before the interceptors, as `unimplemented`", async () => {
    const record: { value?: string } = {};
    const { request: req, contextValues } = request("application/json", Buffer.from("{}"), { "content-encoding": "zstd" });
    const response = await routerWith(record)(req);
    expect(reachedImplementation(contextValues)).toBe(false);
    const body = JSON.parse(Buffer.from(await readAllBytes(response.body!, 1 << 20)).toString()) as { code: string };
    expect({ status: response.status, code: body.code }).toEqual({ status: 501, code: "unimplemented" });
  });

  it("answers a gRPC envelope that does not decode with `internal` in the trailers, reaching no interceptor", async () => {
    const record: { value?: string } = {};
    const envelope = Buffer.from([0, 0, 0, 0, 3, 0xff, 0xff, 0xff]);
    const { request: req, contextValues } = request("application/grpc", envelope, { te: "trailers" });
    const response = await routerWith(record)(req);
    for await (const _ of response.body ?? []) void _;
    expect(reachedImplementation(contextValues)).toBe(false);
    expect(findTrailerError(response.trailer!)?.code).toBe(Code.Internal);
  });
});

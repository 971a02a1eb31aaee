import http from "node:http";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, createContextValues, type Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerInfoService } from "../../gen/service/verify/v2/server_info_pb.ts";
import { createLogger } from "../../src/observability/logger.ts";
import type { RpcPolicy } from "../../src/rpc/policy.ts";
import type { RpcService } from "../../src/rpc/routes.ts";
import { ServerInfoHandler } from "../../src/rpc/services/server-info.ts";
import { createRpcHandler } from "../../src/server/connect-protocol/rpc-handler.ts";

/**
 * The unary fast path is made from the router's own registrations and
 * interceptors: an interceptor added to the policy runs on both paths, with
 * nothing to add to the fast path. A call with `connect-timeout-ms` goes to
 * the router (the fast path takes no deadlines); one without takes the fast
 * path. Both must see the interceptor, and answer what it answers.
 */
describe("one definition of every RPC", () => {
  const seen: string[] = [];
  /** Stands for any interceptor a policy may add: it records the call, stamps the answer, refuses a marked request. */
  const added: Interceptor = (next) => async (req) => {
    seen.push(req.header.get("connect-timeout-ms") ? "router" : "fast");
    if (req.header.get("x-refuse") === "yes") throw new ConnectError("refused by the added interceptor", Code.PermissionDenied);
    const res = await next(req);
    res.header.set("x-added", "1");
    return res;
  };
  const services: RpcService[] = [
    { service: ServerInfoService, implementation: new ServerInfoHandler("mock", () => new Date(0)) as never, access: "public" },
  ];
  const policy = {
    services,
    interceptors: [added],
    readMaxBytes: 1 << 20,
    authentication: {
      beforeBody: async () => ({ contextValues: createContextValues(), refused: false }),
      refusalOfUnreadCall: async () => undefined,
    },
  } as unknown as RpcPolicy;
  const rpc = createRpcHandler(policy, createLogger("silent"));
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => rpc.handle(req, res, rpc.match(req.url ?? "")!));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${ServerInfoService.typeName}/GetServerInfo`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function call(headers: Record<string, string>) {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" });
    return { status: response.status, added: response.headers.get("x-added"), body: await response.text() };
  }

  it("runs an interceptor the policy adds on the fast path and on the router alike", async () => {
    seen.length = 0;
    const fast = await call({});
    const router = await call({ "connect-timeout-ms": "600000" });
    expect(seen).toEqual(["fast", "router"]);
    expect(fast).toEqual(router);
    expect(fast.added).toBe("1");
  });

  it("answers an interceptor's refusal alike on both paths", async () => {
    seen.length = 0;
    const fast = await call({ "x-refuse": "yes" });
    const router = await call({ "x-refuse": "yes", "connect-timeout-ms": "600000" });
    expect(seen).toEqual(["fast", "router"]);
    expect(fast).toEqual(router);
    expect(fast.status).toBe(403);
  });
});

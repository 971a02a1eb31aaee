import { Code, ConnectError, createConnectRouter, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { Logger } from "../observability/logger.ts";
import type { AnyRequest, AnyResponse } from "./request-handler.ts";

type NodeResponse = Parameters<typeof universalResponseToNodeResponse>[1];

export interface RpcHandler {
  /** The procedure path ("/pkg.Service/Method") if this request is an RPC. */
  match(pathname: string): string | undefined;
  handle(req: AnyRequest, res: AnyResponse, procedure: string): void;
}

export interface RpcHandlerOptions {
  routes: (router: ConnectRouter) => void;
  interceptors: Interceptor[];
  readMaxBytes: number;
  logger: Logger;
}

/**
 * Connect, gRPC and gRPC-Web for every registered procedure, on HTTP/1.1 and
 * HTTP/2 alike. Does what connectNodeAdapter does, but lets the caller see the
 * matched procedure first (for metrics and logs) and logs through our logger.
 */
export function createRpcHandler(options: RpcHandlerOptions): RpcHandler {
  const router = createConnectRouter({
    interceptors: options.interceptors,
    readMaxBytes: options.readMaxBytes,
    acceptCompression: [compressionGzip, compressionBrotli],
    // The spec's JSON clients send exactly the documented fields; a misspelt one
    // must be an error, not silently ignored.
    jsonOptions: { ignoreUnknownFields: false },
  });
  options.routes(router);
  const handlers = new Map<string, UniversalHandler>(router.handlers.map((h) => [h.requestPath, h]));

  return {
    match: (pathname) => (handlers.has(pathname) ? pathname : undefined),
    handle(req, res, procedure) {
      const handler = handlers.get(procedure);
      if (!handler) throw new TypeError(`no handler for ${procedure}`);
      const universal = universalRequestFromNodeRequest(req, res as NodeResponse, undefined, undefined);
      handler(universal)
        .then((response) => universalResponseToNodeResponse(response, res as NodeResponse))
        .catch((reason: unknown) => {
          if (ConnectError.from(reason).code === Code.Aborted) return;
          options.logger.error({ procedure, err: reason }, "rpc response failed");
        });
    },
  };
}

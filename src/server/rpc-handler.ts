import {
  Code,
  ConnectError,
  createConnectRouter,
  type ConnectRouter,
  type Interceptor,
} from "@connectrpc/connect";
import type { Preauthentication } from "../rpc/auth.ts";
import { depthCheckedDecoder } from "../rpc/depth-checked-json.ts";
import type { RpcService } from "../rpc/routes.ts";
import { createAsyncIterable, type UniversalHandler } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { Logger } from "../observability/logger.ts";
import { withEmptyRequestBody } from "./empty-request-body.ts";
import type { AnyRequest, AnyResponse } from "./exchange.ts";
import { answerClientFaults } from "./rpc-client-faults.ts";
import { writeGrpcError } from "./grpc-error-response.ts";
import { createFastPath, type FastPath, type ReadBody } from "./unary-fast-path.ts";

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
  /**
   * Runs on the headers before the body is read (authentication). Its context
   * values reach the interceptors; when it says the call will be refused, the
   * body is not decoded at all.
   */
  beforeBody?: (service: string, headers: Pick<Headers, "get">) => Promise<Preauthentication>;
  /**
   * Services whose plain Connect unary calls skip the router (see unary-fast-path.ts); they must also be
   * registered by `routes`. Needs `beforeBody` and `toError` to stand for the interceptors.
   */
  fastPath?: {
    services: RpcService[];
    toError: (error: unknown, procedure: string) => ConnectError;
  };
}

/**
 * Connect, gRPC and gRPC-Web for every registered procedure, on HTTP/1.1 and
 * HTTP/2 alike. Does what connectNodeAdapter does, but lets the caller see the
 * matched procedure first (for metrics and logs) and logs through our logger.
 */
export function createRpcHandler(options: RpcHandlerOptions): RpcHandler {
  const compressions = [compressionGzip, compressionBrotli];
  const router = createConnectRouter({
    interceptors: options.interceptors,
    readMaxBytes: options.readMaxBytes,
    acceptCompression: compressions,
    jsonOptions: routerJsonOptions,
  });
  options.routes(router);
  const handlers = new Map<string, UniversalHandler>(router.handlers.map((h) => [h.requestPath, h]));
  const acceptedEncodings = compressions.map((c) => c.name);
  const fast: FastPath | undefined =
    options.fastPath && options.beforeBody
      ? createFastPath({
          services: options.fastPath.services,
          readMaxBytes: options.readMaxBytes,
          jsonOptions: { ignoreUnknownFields: false },
          acceptCompression: compressions,
          compressMinBytes: connectCompressMinBytes,
          authenticate: options.beforeBody,
          toError: options.fastPath.toError,
          rewriteError: (response, inputTypeName) => answerClientFaults(response, inputTypeName, acceptedEncodings),
        })
      : undefined;

  return {
    match: (pathname) => (handlers.has(pathname) ? pathname : undefined),
    handle(req, res, procedure) {
      const handler = handlers.get(procedure);
      if (!handler) throw new TypeError(`no handler for ${procedure}`);
      /** The full Connect handler; `body` and `known` when the fast path already read it and authenticated. */
      const serve = async (body?: ReadBody, known?: Preauthentication) => {
        let universal = universalRequestFromNodeRequest(req, res as NodeResponse, undefined, undefined);
        if (body) universal = { ...universal, body: body instanceof Uint8Array ? createAsyncIterable([body]) : body };
        const before = known ?? await options.beforeBody?.(handler.service.typeName, universal.header).catch((error: unknown) => {
          // Left to the interceptors, which authenticate again and map the failure (e.g. database unavailable).
          options.logger.debug({ procedure, err: error }, "authentication before the body failed");
          return undefined;
        });
        if (before) {
          universal = { ...universal, contextValues: before.contextValues };
          if (before.refused) universal = withEmptyRequestBody(universal);
        }
        const response = await answerClientFaults(await handler(universal), handler.method.input.typeName, acceptedEncodings);
        await universalResponseToNodeResponse(response, res as NodeResponse);
      };
      const fail = (reason: unknown) => {
        if (ConnectError.from(reason).code === Code.Aborted) return;
        if (!res.headersSent && isMissingAuthority(reason)) {
          // An HTTP/2 request without :authority or Host; HTTP/1.1 refuses those itself.
          res.statusCode = 400;
          res.end();
          return;
        }
        // Connect cannot put a message that is not valid Unicode into gRPC's percent-encoded
        // grpc-message (it throws while writing the error about that very text): the client's fault.
        const badText = hasCause(reason, URIError);
        if (!badText) options.logger.error({ procedure, err: reason }, "rpc response failed");
        if (res.headersSent) {
          res.end();
        } else if (isGrpc(req.headers["content-type"])) {
          writeGrpcError(res, req.headers["content-type"] ?? "", badText ? invalidText : internal);
        } else {
          res.statusCode = 500;
          res.end();
        }
      };
      if (fast?.tryHandle(req, res, procedure, (body, known) => void serve(body, known).catch(fail), fail)) return;
      serve().catch(fail);
    },
  };
}

/**
 * The spec's JSON clients send exactly the documented fields; a misspelt one must be an error, not silently
 * ignored. The decoder refuses deeply nested bodies before they are parsed: the router's type leaves it out,
 * but Connect hands these options to its JSON serialisation, which takes it (JsonSerializationOptions).
 */
const routerJsonOptions = { ignoreUnknownFields: false, textDecoder: depthCheckedDecoder };

/** connect-node's default: responses smaller than this are not compressed. */
const connectCompressMinBytes = 1024;

function isMissingAuthority(reason: unknown): boolean {
  return reason instanceof ConnectError && reason.rawMessage.startsWith("unable to determine request authority");
}

const invalidText = { code: Code.InvalidArgument, message: "the request holds text that is not valid Unicode" };
const internal = { code: Code.Internal, message: "internal error" };

function isGrpc(contentType: string | undefined): boolean {
  return /^application\/grpc/i.test(contentType ?? "");
}

function hasCause(reason: unknown, type: new (...args: never[]) => Error): boolean {
  for (let cause = reason, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (cause instanceof type) return true;
  }
  return false;
}

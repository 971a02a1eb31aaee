import { Code, ConnectError, createConnectRouter, createContextValues } from "@connectrpc/connect";
import { createAsyncIterable, type UniversalServerRequest } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import { depthCheckedDecoder } from "../../rpc/depth-checked-json.ts";
import type { RpcPolicy } from "../../rpc/policy.ts";
import { registerServices } from "../../rpc/routes.ts";
import type { Logger } from "../../observability/logger.ts";
import type { AnyRequest, AnyResponse } from "../exchange.ts";
import type { Preauthentication } from "../../rpc/auth.ts";
import { refuseInvalidUtf8InBinaryMessages } from "./strict-utf8.ts";
import { answerClientFaults, markReached, reachedImplementation } from "./client-faults.ts";
import { withEmptyRequestBody } from "./empty-request-body.ts";
import { writeGrpcError, writeRpcError } from "./grpc-error-response.ts";
import { createFastPath, type ReadBody } from "./unary-fast-path.ts";

type NodeResponse = Parameters<typeof universalResponseToNodeResponse>[1];

export interface RpcHandler {
  /** The procedure path ("/pkg.Service/Method") if this request is an RPC. */
  match(pathname: string): string | undefined;
  handle(req: AnyRequest, res: AnyResponse, procedure: string): void;
}

/**
 * Connect, gRPC and gRPC-Web for every registered procedure, on HTTP/1.1 and
 * HTTP/2 alike, through connect-node's router. Does what connectNodeAdapter
 * does, but lets the caller see the matched procedure first (for metrics and
 * logs), runs the policy's authentication on the headers before the body is
 * read, answers a request the protocol layer could not read as the client's
 * fault (client-faults.ts), and logs through our logger. Plain unary calls
 * take the fast path made from the same registrations, interceptors and
 * options (unary-fast-path.ts).
 */
export function createRpcHandler(policy: RpcPolicy, logger: Logger): RpcHandler {
  refuseInvalidUtf8InBinaryMessages();
  const compressions = [compressionGzip, compressionBrotli];
  // Outermost: marks the calls whose request was read and decoded (see client-faults.ts).
  const interceptors = [markReached, ...policy.interceptors];
  const router = createConnectRouter({ interceptors, readMaxBytes: policy.readMaxBytes, acceptCompression: compressions, jsonOptions: routerJsonOptions });
  registerServices(router, policy.services);
  const fast = createFastPath({
    services: policy.services,
    interceptors,
    readMaxBytes: policy.readMaxBytes,
    jsonOptions: routerJsonOptions,
    acceptCompression: compressions,
    compressMinBytes: connectCompressMinBytes,
    beforeBody: (service, procedure, headers) => policy.authentication.beforeBody(service, procedure, headers),
  });
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, h]));
  const acceptedEncodings = compressions.map((c) => c.name);

  return {
    match: (pathname) => (handlers.has(pathname) ? pathname : undefined),
    handle(req, res, procedure) {
      const handler = handlers.get(procedure);
      if (!handler) throw new TypeError(`no handler for ${procedure}`);
      if (("authority" in req ? req.authority : req.headers.host) === undefined) {
        // An HTTP/2 or HTTP/1.0 request without :authority or Host has no URL (connect-node reads it as below); HTTP/1.1 refuses those itself.
        writeRpcError(res, req.headers["content-type"] ?? "", 400, { code: Code.InvalidArgument, message: "the request names no host (Host or :authority)" });
        return;
      }
      /** The router; `body` and `known` when the fast path already read the body and authenticated. */
      const serve = async (body?: ReadBody, known?: Preauthentication) => {
        let universal: UniversalServerRequest = universalRequestFromNodeRequest(req, res as NodeResponse, undefined, undefined);
        if (body) universal = { ...universal, body: body instanceof Uint8Array ? createAsyncIterable([body]) : body };
        const before = known ?? await policy.authentication.beforeBody(handler.service.typeName, procedure, universal.header).catch((error: unknown) => {
          // Left to the interceptors, which authenticate again and map the failure (e.g. database unavailable).
          logger.debug({ procedure, err: error }, "authentication before the body failed");
          return undefined;
        });
        let values = before?.contextValues ?? createContextValues();
        universal = { ...universal, contextValues: values };
        if (before?.refused) universal = withEmptyRequestBody(universal);
        let response = await handler(universal);
        if (!reachedImplementation(values)) {
          // The request could not be read; a caller admitted on a remembered token that no longer passes is refused instead.
          const refusal = await policy.authentication.refusalOfUnreadCall(values, procedure);
          if (refusal) {
            values = refusal;
            response = await handler(withEmptyRequestBody({ ...universal, contextValues: values }));
          }
        }
        const answer = await answerClientFaults(response, handler.method.input.typeName, acceptedEncodings, reachedImplementation(values), policy.readMaxBytes);
        await universalResponseToNodeResponse(answer, res as NodeResponse);
      };
      const fail = (reason: unknown) => {
        if (ConnectError.from(reason).code === Code.Aborted) return;
        // Connect cannot put a message that is not valid Unicode into gRPC's percent-encoded
        // grpc-message (it throws while writing the error about that very text): the client's fault.
        const badText = hasCause(reason, URIError);
        if (!badText) logger.error({ procedure, err: reason }, "rpc response failed");
        if (res.headersSent) {
          res.end();
        } else if (isGrpc(req.headers["content-type"])) {
          writeGrpcError(res, req.headers["content-type"] ?? "", badText ? invalidText : internal);
        } else {
          res.statusCode = 500;
          res.end();
        }
      };
      if (fast.tryHandle(req, res, procedure, (body, known) => void serve(body, known).catch(fail), fail)) return;
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

import { create, fromBinary, fromJson, isMessage, toBinary, type DescMessage, type Message, type DescService, type JsonReadOptions } from "@bufbuild/protobuf";
import { Code, ConnectError, createServiceImplSpec, type HandlerContext, type Interceptor, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { compressionNegotiate, type Compression } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import type { Preauthentication } from "../../rpc/auth.ts";
import type { RpcService } from "../../rpc/rpc-service.ts";
import { headerValue, type AnyRequest, type AnyResponse } from "../exchange.ts";
import { LazyContext } from "./lazy-handler-context.ts";
import { messageJson } from "./message-json.ts";

/** A unary procedure the fast path can answer. */
interface FastProcedure {
  service: DescService;
  method: HandlerContext["method"];
  input: DescMessage;
  output: DescMessage;
  /** The output's JSON form, as toJsonString writes it (see messageJson). */
  outputJson: (message: Message) => string;
  /** The implementation inside the router's interceptors: the output message, or what they throw. */
  call: (request: UnaryRequest) => Promise<Message>;
}

/** What the router is given too: the fast path derives everything it does from the same values. */
export interface FastPathOptions {
  /** The registrations the router serves (RpcPolicy.services): every unary procedure of them. */
  services: readonly RpcService[];
  /** The router's interceptors, in the router's order. */
  interceptors: readonly Interceptor[];
  readMaxBytes: number;
  /** The router's JSON options; its text decoder too. */
  jsonOptions: Partial<JsonReadOptions> & { textDecoder: { decode(input: Uint8Array): string } };
  acceptCompression: Compression[];
  /** Connect's own default: smaller responses are sent as they are. */
  compressMinBytes: number;
  /** The authentication the transport runs on the headers before the body (RpcAuthentication.beforeBody); refused calls are left to the router. */
  beforeBody: (service: string, procedure: string, headers: Pick<Headers, "get">) => Promise<Preauthentication>;
}

/** The request body for the full handler: all of it read already, or what was read followed by the rest. */
export type ReadBody = Uint8Array | AsyncIterable<Uint8Array>;

/** Hands the call to the router: the body read so far, and the authentication when it was done (not done again). */
export type Fallback = (body: ReadBody, auth?: Preauthentication) => void;

export interface FastPath {
  /**
   * True when it took the request; false when the caller must run the full
   * Connect handler. Once taken, `fallback` hands it to the full handler
   * (with the authentication already done, when it was)
   * with the body read so far, and `fail` answers a failure to respond.
   */
  tryHandle(req: AnyRequest, res: AnyResponse, procedure: string, fallback: Fallback, fail: (reason: unknown) => void): boolean;
}

type Protocol = "connect-json" | "connect-proto" | "grpc";
const protocols: Record<string, Protocol> = {
  "application/json": "connect-json",
  "application/proto": "connect-proto",
  "application/grpc": "grpc",
  "application/grpc+proto": "grpc",
};

/**
 * Unary calls in their plainest form, answered without connect-node's
 * per-call machinery: Connect (POST, `application/json` or
 * `application/proto`, a Content-Length, no compressed body, no timeout, no
 * protocol version other than 1) and gRPC over HTTP/2 (`application/grpc`
 * or `+proto`, one uncompressed message, no timeout). No web Headers, no
 * AbortSignal, no async iterables unless something asks for them; head and
 * body written together. Connect's per-call machinery costs more than a
 * status check's own work on SQLite (docs/performance.md).
 *
 * Nothing here is declared twice. The procedures are every unary method of
 * the registrations the router serves; a call runs through the router's own
 * interceptors (authentication, error boundary, whatever the policy adds)
 * in the router's order, after the same authentication before the body; it
 * decodes with the router's JSON options and the generated schemas, and
 * answers errors with Connect's own serialisers. Anything else goes to the
 * router with the body already read: a refused token, a body that does not
 * decode (so the router words the error), oversized bodies, streaming, GET,
 * compression, gRPC-Web. Tests prove both paths give the same bytes
 * (test/service/unary-fast-path.test.ts); test/unit/connect-protocol.test.ts
 * holds the Connect release this is written against.
 */
export function createFastPath(options: FastPathOptions): FastPath {
  const procedures = new Map<string, FastProcedure>();
  for (const { service, implementation } of options.services) {
    const spec = createServiceImplSpec(service, implementation);
    // Connect's order (applyInterceptors): the first interceptor is the outermost.
    const interceptors = [...options.interceptors].reverse();
    for (const method of Object.values(spec.methods)) {
      if (method.kind !== "unary") continue;
      procedures.set(`/${service.typeName}/${method.method.name}`, {
        service,
        method: method.method,
        input: method.method.input,
        output: method.method.output,
        outputJson: messageJson(method.method.output),
        call: intercepted(method.method, method.impl as Implementation, interceptors),
      });
    }
  }

  /** Authenticates, decodes and runs the call through the interceptors; `handOver` when the router must take it instead. */
  async function run(req: AnyRequest, res: AnyResponse, path: string, p: FastProcedure, protocol: Protocol, message: Buffer) {
    const headers = { get: (name: string) => headerValue(req.headers[name.toLowerCase()]) };
    const auth = await options.beforeBody(p.service.typeName, path, headers).catch(() => undefined);
    if (!auth || auth.refused) return { handOver: auth };
    let input: Message;
    try {
      // The router's decoder: a body nested too deep throws here, and the router answers it in its words.
      input = protocol === "connect-json" ? fromJson(p.input, JSON.parse(options.jsonOptions.textDecoder.decode(message)), options.jsonOptions) : fromBinary(p.input, message);
    } catch {
      return { handOver: auth };
    }
    const context = new LazyContext(req, res, p, path, auth.contextValues, protocol === "grpc" ? "grpc" : "connect");
    try {
      const output = await p.call(unaryRequest(context, p, input));
      return { context, output: protocol === "connect-json" ? Buffer.from(p.outputJson(output)) : toBinary(p.output, output) };
    } catch (thrown) {
      // As Connect's handlers: the error boundary makes every error a ConnectError; anything else is a bare internal.
      return { context, error: thrown instanceof ConnectError ? thrown : new ConnectError("internal error", Code.Internal, undefined, undefined, thrown) };
    }
  }

  async function answerConnect(req: AnyRequest, res: AnyResponse, path: string, p: FastProcedure, protocol: Protocol, body: Buffer, fallback: Fallback) {
    const outcome = await run(req, res, path, p, protocol, body);
    if ("handOver" in outcome) return fallback(body, outcome.handOver);
    if (outcome.error) {
      const out = errorToJsonBytes(outcome.error, options.jsonOptions);
      const header = new Headers({ "content-type": "application/json", "content-length": String(out.byteLength) });
      outcome.error.metadata.forEach((value, key) => header.set(key, value));
      const status = codeToHttpStatus(outcome.error.code);
      res.writeHead(status, Object.fromEntries(header));
      res.end(out);
      return;
    }
    let out = outcome.output;
    const compression = compressionNegotiate(options.acceptCompression, null, headerValue(req.headers["accept-encoding"]), "Accept-Encoding");
    const compressed = compression.response && out.byteLength >= options.compressMinBytes ? compression.response : undefined;
    if (compressed) out = await compressed.compress(out);
    const head: Record<string, string> = {};
    if (compressed) head["content-encoding"] = compressed.name;
    head["content-length"] = String(out.byteLength);
    head["content-type"] = protocol === "connect-json" ? "application/json" : "application/proto";
    const extra = outcome.context.touchedHeaders(true);
    res.writeHead(200, extra ? sorted(head, extra) : head);
    res.end(out);
  }

  async function answerGrpc(req: AnyRequest, res: AnyResponse, path: string, p: FastProcedure, body: Buffer, fallback: Fallback) {
    // One uncompressed message, exactly: anything else is the full handler's to judge.
    if (body.byteLength < 5 || body[0] !== 0 || body.readUInt32BE(1) !== body.byteLength - 5) return fallback(body);
    const outcome = await run(req, res, path, p, "grpc", body.subarray(5));
    if ("handOver" in outcome) return fallback(body, outcome.handOver);
    const compression = compressionNegotiate(options.acceptCompression, null, headerValue(req.headers["grpc-accept-encoding"]), "Grpc-Accept-Encoding");
    let head: Record<string, string> = { "content-type": "application/grpc+proto" };
    if (compression.response) head["grpc-encoding"] = compression.response.name;
    const extra = outcome.context.touchedHeaders(false);
    if (extra) head = sorted(head, extra);
    const trailer = outcome.context.trailers();
    if (outcome.error) {
      setTrailerStatus(trailer, outcome.error);
      res.writeHead(200, head);
      res.addTrailers(Object.fromEntries(trailer));
      res.end();
      return;
    }
    let message = outcome.output;
    let flags = 0;
    if (compression.response && message.byteLength >= options.compressMinBytes) {
      message = await compression.response.compress(message);
      flags = 1;
    }
    const envelope = Buffer.allocUnsafe(5 + message.byteLength);
    envelope[0] = flags;
    envelope.writeUInt32BE(message.byteLength, 1);
    envelope.set(message, 5);
    setTrailerStatus(trailer, undefined);
    res.writeHead(200, head);
    res.addTrailers(Object.fromEntries(trailer));
    res.end(envelope);
  }

  return {
    tryHandle(req, res, procedure, fallback, fail) {
      const p = procedures.get(procedure);
      if (!p || req.method !== "POST") return false;
      const h = req.headers;
      const protocol = protocols[h["content-type"] ?? ""];
      if (protocol === "grpc") {
        if (req.httpVersionMajor !== 2 || h["grpc-encoding"] !== undefined || h["grpc-timeout"] !== undefined) return false;
        readBody(req, options.readMaxBytes + 5, fallback, (body) => void answerGrpc(req, res, procedure, p, body, fallback).catch(fail));
        return true;
      }
      if (protocol === undefined || h["content-encoding"] !== undefined || h["connect-timeout-ms"] !== undefined) return false;
      const version = h["connect-protocol-version"];
      if (version !== undefined && version !== "1") return false;
      const length = Number(h["content-length"] ?? Number.NaN);
      if (!Number.isSafeInteger(length) || length < 0 || length > options.readMaxBytes) return false;
      readBody(req, length, fallback, (body) => {
        if (body.byteLength !== length) return fallback(body);
        void answerConnect(req, res, procedure, p, protocol, body, fallback).catch(fail);
      });
      return true;
    },
  };
}

/**
 * Reads the whole body, up to `limit` bytes. A body that goes on past it
 * (HTTP/2 does not enforce Content-Length, gRPC sends none) is handed to the
 * full handler as what was read followed by the rest, as if never touched.
 */
function readBody(req: AnyRequest, limit: number, overflow: (body: ReadBody) => void, done: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (size <= limit) return;
    req.off("data", onData);
    req.off("end", onEnd);
    req.pause();
    overflow(
      (async function* () {
        yield* chunks;
        for await (const rest of req as AsyncIterable<Buffer>) yield rest;
      })(),
    );
  };
  const onEnd = () => done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  req.on("data", onData);
  req.once("end", onEnd);
  // An aborted request ends in "close" without "end": nothing to answer, and the request log records it.
  req.on("error", () => undefined);
}

/** Head fields in the order Connect's Headers iterate them (sorted by name), so both paths send the same head. */
function sorted(head: Record<string, string>, extra: Headers): Record<string, string> {
  const all = new Headers(head);
  extra.forEach((value, key) => all.set(key, value));
  return Object.fromEntries(all);
}


type Implementation = (input: never, context: HandlerContext) => unknown;
type UnaryNext = (request: UnaryRequest) => Promise<UnaryResponse>;

const contextKey = Symbol("fast path handler context");
type FastRequest = UnaryRequest & { [contextKey]: LazyContext };

/** The implementation wrapped in the interceptors as Connect's invokeUnaryImplementation wraps it, without its eager context. */
function intercepted(method: HandlerContext["method"], impl: Implementation, reversed: readonly Interceptor[]): (request: UnaryRequest) => Promise<Message> {
  const innermost: UnaryNext = async (request) => {
    const context = (request as FastRequest)[contextKey];
    const result = await impl(request.message as never, context);
    const message = isMessage(result, method.output) ? result : create(method.output, result as never);
    return unaryResponse(context, method, message);
  };
  const next = reversed.reduce((inner, interceptor) => interceptor(inner as never) as unknown as UnaryNext, innermost);
  return async (request) => (await next(request)).message as Message;
}

/** A request as Connect hands interceptors one; the header objects and the signal are made only when read. */
function unaryRequest(context: LazyContext, p: FastProcedure, message: Message): FastRequest {
  return {
    [contextKey]: context,
    stream: false,
    message,
    method: p.method,
    service: p.service,
    requestMethod: "POST",
    contextValues: context.values,
    get url() {
      return context.url;
    },
    get signal() {
      return context.signal;
    },
    get header() {
      return context.requestHeader;
    },
  } as FastRequest;
}

function unaryResponse(context: LazyContext, method: HandlerContext["method"], message: Message): UnaryResponse {
  return {
    stream: false,
    message,
    method,
    service: method.parent,
    get header() {
      return context.responseHeader;
    },
    get trailer() {
      return context.responseTrailer;
    },
  } as UnaryResponse;
}

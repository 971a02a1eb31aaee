import { create, fromBinary, fromJson, isMessage, toBinary, toJsonString, type DescMessage, type DescService, type JsonReadOptions } from "@bufbuild/protobuf";
import {
  createServiceImplSpec,
  type ConnectError,
  type ContextValues,
  type HandlerContext,
  type ServiceImpl,
} from "@connectrpc/connect";
import { compressionNegotiate, createAsyncIterable, type Compression, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import type { AnyRequest, AnyResponse } from "./exchange.ts";

/** A unary procedure the fast path can answer. */
interface FastProcedure {
  service: DescService;
  method: HandlerContext["method"];
  input: DescMessage;
  output: DescMessage;
  impl: (input: never, context: HandlerContext) => unknown;
}

export interface FastPathOptions {
  services: { service: DescService; implementation: Partial<ServiceImpl<DescService>> }[];
  readMaxBytes: number;
  jsonOptions: Partial<JsonReadOptions>;
  acceptCompression: Compression[];
  /** Connect's own default: smaller responses are sent as they are. */
  compressMinBytes: number;
  /** The same authentication the slow path runs before the body; refused calls are left to it. */
  authenticate: (service: string, headers: Pick<Headers, "get">) => Promise<{ contextValues: ContextValues; refused: boolean }>;
  /** What errorBoundary makes of a handler's error. */
  toError: (error: unknown, procedure: string) => ConnectError;
  /** Rewrites error responses as the slow path does (see rpc-client-faults.ts). */
  rewriteError: (response: UniversalServerResponse, inputTypeName: string) => Promise<UniversalServerResponse>;
}

export interface FastPath {
  /** True when it took the request; false when the caller must run the full Connect handler. */
  tryHandle(req: AnyRequest, res: AnyResponse, procedure: string, fallback: (body: Uint8Array) => void): boolean;
}

const contentTypes: Record<string, boolean> = { "application/json": false, "application/proto": true };

/**
 * Connect unary calls in their plainest form (POST, `application/json` or
 * `application/proto`, a Content-Length, no compressed body, no timeout, no
 * protocol version other than 1), answered without connect-node's router:
 * no web Headers, no AbortSignal, no async iterables, one write. Connect's
 * per-call machinery costs more than a status check's own work on SQLite.
 *
 * It decodes and encodes with the same generated schemas and the same
 * options, calls the same service implementation, answers errors with
 * Connect's own serialiser through the same boundary, and hands anything
 * else to the full handler, with the body it already read: a refused token,
 * a body that does not decode (so the slow path words the error), chunked or
 * oversized bodies, streaming, GET, gRPC, gRPC-Web. Tests prove both paths
 * give the same bytes (test/service/unary-fast-path.test.ts).
 *
 * Interceptors are not run here: the two the server has (errorBoundary and
 * bearerAuthentication) are done by `toError` and `authenticate`. A new
 * interceptor must be mirrored here or the procedures left to the slow path.
 */
export function createFastPath(options: FastPathOptions): FastPath {
  const procedures = new Map<string, FastProcedure>();
  for (const { service, implementation } of options.services) {
    const spec = createServiceImplSpec(service, implementation);
    for (const method of Object.values(spec.methods)) {
      if (method.kind !== "unary") continue;
      procedures.set(`/${service.typeName}/${method.method.name}`, {
        service,
        method: method.method,
        input: method.method.input,
        output: method.method.output,
        impl: method.impl as FastProcedure["impl"],
      });
    }
  }

  async function answer(req: AnyRequest, res: AnyResponse, path: string, p: FastProcedure, binary: boolean, body: Buffer, fallback: (body: Uint8Array) => void) {
    const headers = { get: (name: string) => headerValue(req.headers[name.toLowerCase()]) };
    const auth = await options.authenticate(p.service.typeName, headers).catch(() => undefined);
    if (!auth || auth.refused) return fallback(body);
    let input: unknown;
    try {
      input = binary ? fromBinary(p.input, body) : fromJson(p.input, JSON.parse(body.toString("utf8")), options.jsonOptions);
    } catch {
      return fallback(body);
    }
    const context = new LazyContext(req, res, p, path, auth.contextValues);
    let status = 200;
    let contentType = binary ? "application/proto" : "application/json";
    let out: Uint8Array;
    try {
      const result = await p.impl(input as never, context);
      const message = isMessage(result, p.output) ? result : create(p.output, result as never);
      out = binary ? toBinary(p.output, message) : Buffer.from(toJsonString(p.output, message));
    } catch (thrown) {
      const error = options.toError(thrown, path);
      status = codeToHttpStatus(error.code);
      contentType = "application/json";
      out = errorToJsonBytes(error, options.jsonOptions);
      const header = new Headers({ "content-type": contentType, "content-length": String(out.byteLength) });
      error.metadata.forEach((value, key) => header.set(key, value));
      const rewritten = await options.rewriteError({ status, header, body: createAsyncIterable([out]) }, p.input.typeName);
      return writeUniversal(res, rewritten);
    }
    const extra = context.touchedHeaders();
    const compression = compressionNegotiate(options.acceptCompression, null, headerValue(req.headers["accept-encoding"]), "Accept-Encoding");
    const compressed = compression.response && out.byteLength >= options.compressMinBytes ? compression.response : undefined;
    if (compressed) out = await compressed.compress(out);
    // In the order Connect's Headers iterate them (sorted by name), so both paths send the same head.
    let head: Record<string, string> = {};
    if (compressed) head["content-encoding"] = compressed.name;
    head["content-length"] = String(out.byteLength);
    head["content-type"] = contentType;
    if (extra) {
      extra.forEach((value, key) => (head[key] = value));
      head = Object.fromEntries(Object.entries(head).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    res.writeHead(status, head);
    res.end(out);
  }

  return {
    tryHandle(req, res, procedure, fallback) {
      const p = procedures.get(procedure);
      if (!p || req.method !== "POST") return false;
      const h = req.headers;
      const binary = contentTypes[h["content-type"] ?? ""];
      if (binary === undefined) return false;
      if (h["content-encoding"] !== undefined || h["connect-timeout-ms"] !== undefined) return false;
      const version = h["connect-protocol-version"];
      if (version !== undefined && version !== "1") return false;
      const length = Number(h["content-length"] ?? Number.NaN);
      if (!Number.isSafeInteger(length) || length < 0 || length > options.readMaxBytes) return false;
      readBody(req, length, (body) => {
        if (body.byteLength !== length) return fallback(body);
        answer(req, res, procedure, p, binary, body, fallback).catch((error: unknown) => {
          if (!res.headersSent) res.destroy(error as Error);
        });
      });
      return true;
    },
  };
}

/**
 * The whole body, however many chunks it comes in. Keeps at most one byte
 * past the promised length (HTTP/2 does not enforce Content-Length), enough
 * for the slow path to see the mismatch and answer it.
 */
function readBody(req: AnyRequest, length: number, done: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    if (size > length) return;
    const kept = chunk.byteLength > length + 1 - size ? chunk.subarray(0, length + 1 - size) : chunk;
    size += kept.byteLength;
    chunks.push(kept);
  });
  // An aborted request ends in "close" without "end": nothing to answer, and the request log records it.
  req.on("error", () => undefined);
  req.once("end", () => done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}

async function writeUniversal(res: AnyResponse, response: UniversalServerResponse): Promise<void> {
  const chunks: Uint8Array[] = [];
  if (response.body) for await (const chunk of response.body) chunks.push(chunk);
  const head: Record<string, string> = {};
  response.header?.forEach((value, key) => (head[key] = value));
  res.writeHead(response.status, head);
  res.end(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
}

/**
 * A HandlerContext that builds what a handler asks for only when it asks:
 * the certificate handlers read `values` and nothing else, so the abort
 * signal and the header objects usually never exist.
 */
class LazyContext implements HandlerContext {
  readonly method: HandlerContext["method"];
  readonly service: DescService;
  readonly requestMethod = "POST";
  readonly protocolName = "connect";
  readonly timeoutMs = () => undefined;
  private controller?: AbortController;
  private requestHeaders?: Headers;
  private responseHeaders?: Headers;
  private responseTrailers?: Headers;

  constructor(
    private readonly req: AnyRequest,
    private readonly res: AnyResponse,
    procedure: FastProcedure,
    private readonly path: string,
    readonly values: ContextValues,
  ) {
    this.method = procedure.method;
    this.service = procedure.service;
  }

  get url(): string {
    return `http://${headerValue(this.req.headers.host) ?? "localhost"}${this.path}`;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = (this.controller = new AbortController());
      this.res.once("close", () => {
        if (!this.res.writableFinished) controller.abort();
      });
    }
    return this.controller.signal;
  }

  get requestHeader(): Headers {
    if (!this.requestHeaders) {
      this.requestHeaders = new Headers();
      for (const [name, value] of Object.entries(this.req.headers)) {
        if (value !== undefined && !name.startsWith(":")) this.requestHeaders.set(name, headerValue(value)!);
      }
    }
    return this.requestHeaders;
  }

  get responseHeader(): Headers {
    return (this.responseHeaders ??= new Headers());
  }

  get responseTrailer(): Headers {
    return (this.responseTrailers ??= new Headers());
  }

  /** Response headers and trailers a handler set, as Connect unary sends them (trailers prefixed), if any. */
  touchedHeaders(): Headers | undefined {
    if (!this.responseHeaders && !this.responseTrailers) return undefined;
    const all = new Headers(this.responseHeaders);
    this.responseTrailers?.forEach((value, key) => all.set(`trailer-${key}`, value));
    return all;
  }
}

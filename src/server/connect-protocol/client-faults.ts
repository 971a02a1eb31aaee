import { Code, ConnectError, createContextKey, type ContextValues, type Interceptor } from "@connectrpc/connect";
import { createAsyncIterable, encodeEnvelope, readAllBytes, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import { codeFromString } from "@connectrpc/connect/protocol-connect";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerParse, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";

const reachedKey = createContextKey(false, { description: "the request reached the interceptors" });

/**
 * The outermost interceptor. A unary call that reaches it had its request
 * read, decompressed and decoded: connect-node does all of that before any
 * interceptor runs, so a unary call that never reached it failed on its
 * request. A streaming call reaches it first: its messages are read and
 * decoded afterwards, as the implementation asks for them, and one that
 * cannot be (see requestFaultsOf) is refused here as the client's fault.
 */
export const markReached: Interceptor = (next) => (req) => {
  req.contextValues.set(reachedKey, true);
  if (!req.stream) return next(req);
  return next({ ...req, message: requestFaultsOf(req.message, req.method.input.typeName) });
};

/**
 * A stream's request messages, where connect-node's `internal` for bytes
 * that do not read as one (a truncated message, an envelope compressed
 * without an encoding) becomes `invalid_argument`, in the words a unary
 * call gets for the same bytes (answerClientFaults). Other codes (a message
 * over the size limit, a client gone) pass as they are.
 */
async function* requestFaultsOf<T>(messages: AsyncIterable<T>, inputTypeName: string): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.Internal) throw new ConnectError(undecodable(inputTypeName), Code.InvalidArgument);
    throw error;
  }
}

/** What a request whose message cannot be read is told, on every protocol and kind of call. */
function undecodable(inputTypeName: string): string {
  return `the request body is not a valid ${inputTypeName} message`;
}

export function reachedImplementation(values: ContextValues): boolean {
  return values.get(reachedKey);
}

/**
 * Connect reads and decodes the request message before any interceptor
 * runs, and reports bytes that do not decode (a protobuf binary message, an
 * envelope, a compressed body, a GET request's base64 message) as
 * `internal`: a server fault, when the fault is the client's. A call that
 * never reached the interceptors (markReached) and failed as `internal`
 * failed on its request, so it is answered as `invalid_argument` with a
 * message that names the expected message, without the decoder's details.
 * Nothing here reads an error's wording: what decides is where the call
 * stopped and the code the protocol carries.
 *
 * Errors are rewritten where each protocol carries them: the JSON body of a
 * Connect unary error, the gRPC trailers, and the gRPC-Web trailer frame.
 * A Connect unary success is passed through untouched; gRPC bodies are
 * wrapped, because their status arrives only after the body.
 *
 * One more client fault is answered the HTTP way: a Connect unary request in
 * a content coding we do not support (the only `unimplemented` Connect
 * raises before the interceptors) gets 415 with Accept-Encoding (RFC 9110
 * §15.5.16), rather than the protocol's 501. gRPC keeps its UNIMPLEMENTED
 * status, which travels in an HTTP 200.
 *
 * And two answers get words: a request larger than the limit keeps its code
 * (`resource_exhausted`, gRPC 8) but says the limit rather than the name of
 * connect's option, and a 415 for a content type no protocol here takes,
 * which connect sends without a body, says which ones it takes.
 */
export async function answerClientFaults(
  response: UniversalServerResponse,
  inputTypeName: string,
  acceptedEncodings: string[],
  reached: boolean,
  readMaxBytes = Number.POSITIVE_INFINITY,
): Promise<UniversalServerResponse> {
  if (reached) return response;
  const message = undecodable(inputTypeName);
  const tooLarge = `the request message is larger than this server's limit of ${readMaxBytes} bytes`;
  const contentType = response.header?.get("content-type") ?? "";
  if (response.status === 415 && !contentType) {
    return withConnectError(response, 415, {
      code: "invalid_argument",
      message: "the content type is not one an RPC takes: application/json or application/proto (Connect), application/grpc (gRPC), application/grpc-web (gRPC-Web)",
    }, { "content-type": "application/json" });
  }
  const isConnectError = response.body && contentType.startsWith("application/json") && !response.header?.has("content-encoding");
  if (isConnectError && (response.status === 500 || response.status === 501 || response.status === 429)) {
    const body = await readAllBytes(response.body!, Number.MAX_SAFE_INTEGER);
    const code = connectErrorCode(body);
    if (code === Code.Internal) return withConnectError(response, 400, { code: "invalid_argument", message });
    if (code === Code.ResourceExhausted) return withConnectError(response, response.status, { code: "resource_exhausted", message: tooLarge });
    if (code === Code.Unimplemented) {
      const accepted = acceptedEncodings.join(", ");
      return withConnectError(
        response,
        415,
        { code: "invalid_argument", message: `the request's content coding is not supported: use one of ${accepted}, or none` },
        { "accept-encoding": accepted },
      );
    }
    return { ...response, body: createAsyncIterable([body]) };
  }
  if (response.trailer && /^application\/grpc(\+|;|$)/.test(contentType) && response.body) {
    const trailer = response.trailer;
    const body = response.body;
    return { ...response, body: afterwards(body, () => rewriteTrailer(trailer, message, tooLarge)) };
  }
  if (contentType.startsWith("application/grpc-web") && response.body) {
    return { ...response, body: mapChunks(response.body, (chunk) => rewriteGrpcWebTrailerFrame(chunk, message, tooLarge)) };
  }
  return response;
}

/** The code of a Connect unary error body (its `code` field, in the protocol's string form), if it is one. */
function connectErrorCode(body: Uint8Array): Code | undefined {
  try {
    const { code } = JSON.parse(Buffer.from(body).toString("utf8")) as { code?: unknown };
    return typeof code === "string" ? codeFromString(code) : undefined;
  } catch {
    return undefined;
  }
}

/** The response with another Connect error body (and status, and headers set on top). */
function withConnectError(
  response: UniversalServerResponse,
  status: number,
  error: { code: string; message: string },
  headers: Record<string, string> = {},
): UniversalServerResponse {
  const body = Buffer.from(JSON.stringify(error));
  const header = new Headers(response.header);
  header.set("content-length", String(body.byteLength));
  for (const [name, value] of Object.entries(headers)) header.set(name, value);
  return { ...response, status, header, body: createAsyncIterable([body]) };
}

/** Rewrites gRPC trailer fields in place (`internal` as invalid_argument, a message too large in words); true when changed. */
function rewriteTrailer(trailer: Headers, message: string, tooLarge: string): boolean {
  const code = findTrailerError(trailer)?.code;
  if (code === Code.Internal) setTrailerStatus(trailer, new ConnectError(message, Code.InvalidArgument));
  else if (code === Code.ResourceExhausted) setTrailerStatus(trailer, new ConnectError(tooLarge, Code.ResourceExhausted));
  else return false;
  return true;
}

/** gRPC-Web sends trailers as a last frame: the trailer flag, a 4-byte length, then HTTP/1-style header lines. */
function rewriteGrpcWebTrailerFrame(chunk: Uint8Array, message: string, tooLarge: string): Uint8Array {
  if (chunk.byteLength < 5 || chunk[0] !== trailerFlag) return chunk;
  if (new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength).getUint32(1) !== chunk.byteLength - 5) return chunk;
  const trailer = trailerParse(chunk.subarray(5));
  return rewriteTrailer(trailer, message, tooLarge) ? encodeEnvelope(trailerFlag, trailerSerialize(trailer)) : chunk;
}

async function* afterwards(body: AsyncIterable<Uint8Array>, then: () => unknown): AsyncIterable<Uint8Array> {
  yield* body;
  then();
}

async function* mapChunks(body: AsyncIterable<Uint8Array>, map: (chunk: Uint8Array) => Uint8Array): AsyncIterable<Uint8Array> {
  for await (const chunk of body) yield map(chunk);
}

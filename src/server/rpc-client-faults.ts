import { Code, ConnectError } from "@connectrpc/connect";
import { createAsyncIterable, encodeEnvelope, readAllBytes, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import { findTrailerError, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerParse, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";

/**
 * Connect reads and decodes the request message before any interceptor runs,
 * and reports bytes that do not decode (a protobuf binary message, an
 * envelope, a compressed body, a GET request's base64 message) as `internal`:
 * a server fault, when the fault is the client's. Our own code answers
 * `internal` only with errorBoundary's message, so an `internal` whose
 * message names a decoding step, or is the protocol layer's bare "internal
 * error" (what it says when reading the request threw), is about the
 * request's bytes, and is answered as `invalid_argument` with a message that
 * names the expected message, without the decoder's details.
 *
 * Errors are rewritten where each protocol carries them: the JSON body of a
 * Connect unary error, the gRPC trailers, and the gRPC-Web trailer frame.
 * A Connect unary success is passed through untouched; gRPC bodies are
 * wrapped, because their status arrives only after the body.
 *
 * One more client fault is answered the HTTP way: a Connect unary request in
 * a content coding we do not support gets 415 with Accept-Encoding (RFC 9110
 * §15.5.16), rather than the protocol's 501. gRPC keeps its UNIMPLEMENTED
 * status, which travels in an HTTP 200.
 */
export async function answerClientFaults(
  response: UniversalServerResponse,
  inputTypeName: string,
  acceptedEncodings: string[],
): Promise<UniversalServerResponse> {
  const message = `the request body is not a valid ${inputTypeName} message`;
  const contentType = response.header?.get("content-type") ?? "";
  const isConnectError = response.body && contentType.startsWith("application/json") && !response.header?.has("content-encoding");
  if (isConnectError && response.status === 500) {
    return rewriteConnectError(response, await readAllBytes(response.body!, Number.MAX_SAFE_INTEGER), message);
  }
  if (isConnectError && response.status === 501) {
    return rewriteUnsupportedEncoding(response, await readAllBytes(response.body!, Number.MAX_SAFE_INTEGER), acceptedEncodings);
  }
  if (response.trailer && /^application\/grpc(\+|;|$)/.test(contentType) && response.body) {
    const trailer = response.trailer;
    const body = response.body;
    return { ...response, body: afterwards(body, () => rewriteTrailer(trailer, message)) };
  }
  if (contentType.startsWith("application/grpc-web") && response.body) {
    return { ...response, body: mapChunks(response.body, (chunk) => rewriteGrpcWebTrailerFrame(chunk, message)) };
  }
  return response;
}

const decodeFailure = /^(internal error$|parse binary: |received compressed envelope|invalid envelope, already compressed|decompression failed)/;

/** The code and message of a Connect unary error body, if it is one. */
function connectError(body: Uint8Array): { code?: unknown; message?: unknown } | undefined {
  try {
    return JSON.parse(Buffer.from(body).toString("utf8")) as { code?: unknown; message?: unknown };
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

/** A Connect unary error is a JSON body; the response was read, so it is always returned with a fresh one. */
function rewriteConnectError(response: UniversalServerResponse, body: Uint8Array, message: string): UniversalServerResponse {
  const error = connectError(body);
  if (error?.code !== "internal" || typeof error.message !== "string" || !decodeFailure.test(error.message)) {
    return { ...response, body: createAsyncIterable([body]) };
  }
  return withConnectError(response, 400, { code: "invalid_argument", message });
}

function rewriteUnsupportedEncoding(response: UniversalServerResponse, body: Uint8Array, acceptedEncodings: string[]): UniversalServerResponse {
  const error = connectError(body);
  if (error?.code !== "unimplemented" || typeof error.message !== "string" || !error.message.startsWith("unknown compression")) {
    return { ...response, body: createAsyncIterable([body]) };
  }
  const accepted = acceptedEncodings.join(", ");
  return withConnectError(
    response,
    415,
    { code: "invalid_argument", message: `the request's content coding is not supported: use one of ${accepted}, or none` },
    { "accept-encoding": accepted },
  );
}

/** Rewrites gRPC trailer fields in place; true when they described a decoding failure. */
function rewriteTrailer(trailer: Headers, message: string): boolean {
  const error = findTrailerError(trailer);
  if (error?.code !== Code.Internal || !decodeFailure.test(error.rawMessage)) return false;
  setTrailerStatus(trailer, new ConnectError(message, Code.InvalidArgument));
  return true;
}

/** gRPC-Web sends trailers as a last frame: the trailer flag, a 4-byte length, then HTTP/1-style header lines. */
function rewriteGrpcWebTrailerFrame(chunk: Uint8Array, message: string): Uint8Array {
  if (chunk.byteLength < 5 || chunk[0] !== trailerFlag) return chunk;
  if (new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength).getUint32(1) !== chunk.byteLength - 5) return chunk;
  const trailer = trailerParse(chunk.subarray(5));
  return rewriteTrailer(trailer, message) ? encodeEnvelope(trailerFlag, trailerSerialize(trailer)) : chunk;
}

async function* afterwards(body: AsyncIterable<Uint8Array>, then: () => unknown): AsyncIterable<Uint8Array> {
  yield* body;
  then();
}

async function* mapChunks(body: AsyncIterable<Uint8Array>, map: (chunk: Uint8Array) => Uint8Array): AsyncIterable<Uint8Array> {
  for await (const chunk of body) yield map(chunk);
}

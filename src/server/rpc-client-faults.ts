import type { UniversalServerResponse } from "@connectrpc/connect/protocol";

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
    return rewriteConnectError(response, await readAll(response.body!), message);
  }
  if (isConnectError && response.status === 501) {
    return rewriteUnsupportedEncoding(response, await readAll(response.body!), acceptedEncodings);
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
const grpcInternal = "13";
const grpcInvalidArgument = "3";

/** A Connect unary error is a JSON body; the response was read, so it is always returned with a fresh one. */
function rewriteConnectError(response: UniversalServerResponse, body: Buffer, message: string): UniversalServerResponse {
  let error: { code?: unknown; message?: unknown } | undefined;
  try {
    error = JSON.parse(body.toString("utf8")) as typeof error;
  } catch {
    error = undefined;
  }
  if (error?.code !== "internal" || typeof error.message !== "string" || !decodeFailure.test(error.message)) {
    return { ...response, body: chunks(body) };
  }
  const rewritten = Buffer.from(JSON.stringify({ code: "invalid_argument", message }));
  const header = new Headers(response.header);
  header.set("content-length", String(rewritten.byteLength));
  return { ...response, status: 400, header, body: chunks(rewritten) };
}

function rewriteUnsupportedEncoding(response: UniversalServerResponse, body: Buffer, acceptedEncodings: string[]): UniversalServerResponse {
  let error: { code?: unknown; message?: unknown } | undefined;
  try {
    error = JSON.parse(body.toString("utf8")) as typeof error;
  } catch {
    error = undefined;
  }
  if (error?.code !== "unimplemented" || typeof error.message !== "string" || !error.message.startsWith("unknown compression")) {
    return { ...response, body: chunks(body) };
  }
  const rewritten = Buffer.from(
    JSON.stringify({
      code: "invalid_argument",
      message: `the request's content coding is not supported: use one of ${acceptedEncodings.join(", ")}, or none`,
    }),
  );
  const header = new Headers(response.header);
  header.set("content-length", String(rewritten.byteLength));
  header.set("accept-encoding", acceptedEncodings.join(", "));
  return { ...response, status: 415, header, body: chunks(rewritten) };
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of body) parts.push(part);
  return Buffer.concat(parts);
}

async function* chunks(...parts: Uint8Array[]): AsyncIterable<Uint8Array> {
  yield* parts;
}

/** Rewrites gRPC trailer fields in place; true when they described a decoding failure. */
function rewriteTrailer(trailer: Headers, message: string): boolean {
  if (trailer.get("grpc-status") !== grpcInternal) return false;
  if (!decodeFailure.test(decodeGrpcMessage(trailer.get("grpc-message") ?? ""))) return false;
  trailer.set("grpc-status", grpcInvalidArgument);
  trailer.set("grpc-message", encodeURIComponent(message));
  return true;
}

/** gRPC-Web sends trailers as a last frame: flag 0x80, a 4-byte length, then HTTP/1-style header lines. */
function rewriteGrpcWebTrailerFrame(chunk: Uint8Array, message: string): Uint8Array {
  const trailerFlag = 0x80;
  if (chunk.byteLength < 5 || chunk[0] !== trailerFlag) return chunk;
  const length = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).readUInt32BE(1);
  if (length !== chunk.byteLength - 5) return chunk;
  const trailer = new Headers();
  for (const line of Buffer.from(chunk.subarray(5)).toString("latin1").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) trailer.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  if (!rewriteTrailer(trailer, message)) return chunk;
  let text = "";
  trailer.forEach((value, key) => (text += `${key}: ${value}\r\n`));
  const data = Buffer.from(text, "latin1");
  const frame = Buffer.alloc(5 + data.byteLength);
  frame[0] = trailerFlag;
  frame.writeUInt32BE(data.byteLength, 1);
  data.copy(frame, 5);
  return frame;
}

function decodeGrpcMessage(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

async function* afterwards(body: AsyncIterable<Uint8Array>, then: () => unknown): AsyncIterable<Uint8Array> {
  yield* body;
  then();
}

async function* mapChunks(body: AsyncIterable<Uint8Array>, map: (chunk: Uint8Array) => Uint8Array): AsyncIterable<Uint8Array> {
  for await (const chunk of body) yield map(chunk);
}

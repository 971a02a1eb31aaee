import { createAsyncIterable, encodeEnvelope, type UniversalServerRequest } from "@connectrpc/connect/protocol";

/**
 * The request with its body replaced by an empty message in the same
 * encoding, for a call that will be refused before its body matters (no
 * valid API token): the protocol layer then decodes nothing the caller sent,
 * and the refusal is answered in the caller's protocol as usual. Content
 * types that are not a unary encoding (and GET requests) are left as they
 * are: the protocol layer rejects those before reading any body.
 */
export function withEmptyRequestBody(request: UniversalServerRequest): UniversalServerRequest {
  if (request.method !== "POST") return request;
  const contentType = (request.header.get("content-type") ?? "").toLowerCase().split(";", 1)[0]!.trim();
  const body = emptyBodyFor(contentType);
  if (!body) return request;
  const header = new Headers(request.header);
  for (const name of ["content-encoding", "grpc-encoding", "content-length"]) header.delete(name);
  return { ...request, header, body: createAsyncIterable([body]) };
}

const emptyJson = Buffer.from("{}");
const envelope = (payload: Uint8Array) => encodeEnvelope(0, payload);

function emptyBodyFor(contentType: string): Uint8Array | undefined {
  switch (contentType) {
    case "application/proto":
      return new Uint8Array(0);
    case "application/json":
      return emptyJson;
    case "application/grpc":
    case "application/grpc+proto":
    case "application/grpc-web":
    case "application/grpc-web+proto":
      return envelope(new Uint8Array(0));
    case "application/grpc+json":
    case "application/grpc-web+json":
      return envelope(emptyJson);
    default:
      return undefined;
  }
}

import { ConnectError, type Code } from "@connectrpc/connect";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";
import type { AnyResponse } from "../exchange.ts";

/**
 * Answers a gRPC or gRPC-Web call with an error status when the protocol
 * layer could not: gRPC as a trailers-only response (the status in the
 * headers of an empty response), gRPC-Web as a body holding only the
 * trailer frame. The status fields are written by Connect's own encoder.
 */
export function writeGrpcError(res: AnyResponse, requestContentType: string, error: { code: Code; message: string }): void {
  const status = setTrailerStatus(new Headers(), new ConnectError(error.message, error.code));
  // The codec the caller asked for, as a gRPC server answers in it: +json for +json, +proto otherwise.
  const codec = /^application\/grpc(?:-web)?\+json/i.test(requestContentType) ? "json" : "proto";
  if (/^application\/grpc-web/i.test(requestContentType)) {
    const frame = encodeEnvelope(trailerFlag, trailerSerialize(status));
    res.writeHead(200, { "content-type": `application/grpc-web+${codec}`, "content-length": String(frame.byteLength) });
    res.end(frame);
    return;
  }
  res.writeHead(200, { "content-type": `application/grpc+${codec}`, ...Object.fromEntries(status) });
  res.end();
}

/**
 * The same for a call the router never saw, in the caller's protocol: a gRPC
 * or gRPC-Web status, or for Connect (and anything else) the HTTP status
 * given with a Connect error body.
 */
export function writeRpcError(res: AnyResponse, requestContentType: string, httpStatus: number, error: { code: Code; message: string }): void {
  if (/^application\/grpc/i.test(requestContentType)) {
    writeGrpcError(res, requestContentType, error);
    return;
  }
  const body = JSON.stringify({ code: codeToString(error.code), message: error.message });
  res.writeHead(httpStatus, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
  res.end(body);
}

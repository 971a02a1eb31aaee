import type { Code } from "@connectrpc/connect";
import type { AnyResponse } from "./exchange.ts";

/**
 * Answers a gRPC or gRPC-Web call with an error status when the protocol
 * layer could not: gRPC as a trailers-only response (the status in the
 * headers of an empty response), gRPC-Web as a body holding only the
 * trailer frame.
 */
export function writeGrpcError(res: AnyResponse, requestContentType: string, error: { code: Code; message: string }): void {
  const status = String(error.code);
  const message = encodeURIComponent(error.message);
  if (/^application\/grpc-web/i.test(requestContentType)) {
    const trailer = Buffer.from(`grpc-status: ${status}\r\ngrpc-message: ${message}\r\n`, "latin1");
    const frame = Buffer.alloc(5 + trailer.byteLength);
    frame[0] = 0x80;
    frame.writeUInt32BE(trailer.byteLength, 1);
    trailer.copy(frame, 5);
    res.writeHead(200, { "content-type": "application/grpc-web+proto", "content-length": String(frame.byteLength) });
    res.end(frame);
    return;
  }
  res.writeHead(200, { "content-type": "application/grpc+proto", "grpc-status": status, "grpc-message": message });
  res.end();
}

import { Code } from "@connectrpc/connect";
import type { AnyRequest, AnyResponse } from "../exchange.ts";
import { writeRpcError } from "./grpc-error-response.ts";

/** A procedure's path: "/" then a package-qualified service name, "/" then a method name. */
const procedurePath = /^\/[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\/[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A call to a procedure this server does not have, answered in the caller's
 * protocol as a gRPC or Connect server answers one: gRPC and gRPC-Web with
 * the status UNIMPLEMENTED (12) in trailers, Connect with 404 and an error
 * body of code `unimplemented`. True when answered; anything that is not
 * such a call (no procedure's path, not a POST, a content type the router
 * does not speak) is left to the web routes, which answer their own 404.
 */
export function answerUnknownProcedure(req: AnyRequest, res: AnyResponse, pathname: string): boolean {
  if (req.method !== "POST" || !procedurePath.test(pathname)) return false;
  const contentType = req.headers["content-type"] ?? "";
  // The content types the router speaks (gRPC-Web's base64 "-text" form is not one): anything else is the web's 404.
  if (!/^application\/(?:grpc(?:-web)?(?:\+(?:proto|json))?|(?:connect\+)?(?:json|proto))(?:;|$)/i.test(contentType)) return false;
  writeRpcError(res, contentType, 404, { code: Code.Unimplemented, message: `this server has no procedure ${pathname}` });
  return true;
}

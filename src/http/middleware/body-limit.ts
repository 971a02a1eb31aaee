import type { RequestHandler } from "express";
import { HttpError } from "../errors.ts";

/**
 * Refuses a declared Content-Length above the limit before any route reads the
 * body. Bodies without a length (chunked) are bounded by the parsers' own limit.
 */
export function bodyLimit(maxBytes: number): RequestHandler {
  return (req, _res, next) => {
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > maxBytes) {
      next(new HttpError(413, "request_too_large", `the request body exceeds the limit of ${maxBytes} bytes`));
      return;
    }
    next();
  };
}

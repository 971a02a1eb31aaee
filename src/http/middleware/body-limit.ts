import type { RequestHandler } from "express";
import { requestTooLarge } from "./errors.ts";

/**
 * Refuses a declared Content-Length above the limit before any route reads the
 * body. Bodies without a length (chunked) are bounded by the parsers' own limit.
 */
export function bodyLimit(maxBytes: number): RequestHandler {
  return (req, _res, next) => {
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > maxBytes) {
      next(requestTooLarge(maxBytes));
      return;
    }
    next();
  };
}

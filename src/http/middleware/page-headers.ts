import type { RequestHandler } from "express";

/**
 * Headers for every interaction page: never framed (clickjacking), never
 * cached (they carry CSRF tokens and personal data), no scripts at all.
 */
export const pageHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    "Cache-Control": "no-store",
    Pragma: "no-cache",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
  });
  next();
};

import type { RequestHandler } from "express";

/**
 * The policy of every HTML response: no scripts, styles inline only, never
 * framed, no <base>. No form-action: browsers apply it to the redirect that
 * follows a form, and our forms end in a redirect to the application.
 */
export const contentSecurityPolicy =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'";

/**
 * The policy of a mock-mode JPKI page: the same, plus scripts from this
 * origin only (the mock card's script file; never inline, never elsewhere).
 */
export const mockCardContentSecurityPolicy = contentSecurityPolicy.replace("default-src 'none';", "default-src 'none'; script-src 'self';");

/**
 * Headers on every Express response (pages, the home page, error pages, JSON
 * APIs alike): a strict content security policy and no framing. JSON and
 * other non-HTML answers are unaffected by them; HTML is then safe wherever it
 * comes from, including pages a route did not mark as one.
 */
export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set(securityHeaderValues);
  next();
};

/** The headers securityHeaders sets (also set by the form endpoints served without Express). */
export const securityHeaderValues: Readonly<Record<string, string>> = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Content-Security-Policy": contentSecurityPolicy,
};

/**
 * Headers for every interaction page on top of securityHeaders: never cached
 * (they carry CSRF tokens and personal data).
 */
export const pageHeaders: RequestHandler = (_req, res, next) => {
  res.set(pageHeaderValues);
  next();
};

/** The headers pageHeaders sets (also set by the authorization endpoint served without Express). */
export const pageHeaderValues: Readonly<Record<string, string>> = {
  "Cache-Control": "no-store",
  Pragma: "no-cache",
};

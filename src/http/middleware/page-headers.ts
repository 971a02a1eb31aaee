import type { RequestHandler } from "express";

/**
 * The policy of every HTML response: no scripts, styles inline only, forms
 * post to this origin only, never framed, no <base>.
 */
export const contentSecurityPolicy =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The policy of a page whose form may end in a redirect to an application
 * (sign-in, step-up and consent to the client's redirect_uri, logout to its
 * post_logout_redirect_uri): Chromium applies form-action to the redirects
 * that follow a submission too, so the policy also names where those go, as
 * already matched against the client's registration. An http(s) target is
 * named by its origin, any other (an app's own scheme) by its scheme.
 */
export function policyWithFormTargets(targets: readonly string[], policy = contentSecurityPolicy): string {
  const sources = [...new Set(targets.map(formTargetSource).filter((source) => source !== undefined))];
  return sources.length === 0 ? policy : policy.replace("form-action 'self'", `form-action 'self' ${sources.join(" ")}`);
}

function formTargetSource(target: string): string | undefined {
  if (!URL.canParse(target)) return undefined;
  const url = new URL(target);
  const source = url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
  // A source expression is one token: anything that could break the header stays out.
  return /^[A-Za-z0-9+.:/[\]-]+$/.test(source) ? source : undefined;
}

/**
 * A page's policy with scripts from this origin allowed, for the JPKI pages
 * (the copy button's script, the script that waits for a phone's answer and
 * asks this origin how it is doing, and in mock mode the mock card's; never
 * inline, never elsewhere).
 */
export function withPageScripts(policy: string): string {
  return policy.replace("default-src 'none';", "default-src 'none'; script-src 'self'; connect-src 'self';");
}

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

/** The headers securityHeaders sets. */
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

/** The headers pageHeaders sets. */
export const pageHeaderValues: Readonly<Record<string, string>> = {
  "Cache-Control": "no-store",
  Pragma: "no-cache",
};

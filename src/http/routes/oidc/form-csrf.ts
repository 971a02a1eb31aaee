import type { Request } from "express";
import { csrfTokenMatches } from "../../../domain/oidc/flow/secrets.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";

/**
 * A page's form must carry the CSRF token made for `subject` (an interaction,
 * or a session for pages outside one); otherwise 403, with words the error
 * page puts in the page's language (see i18n/error-descriptions.ts).
 */
export function requireFormCsrf(secretKey: Buffer, subject: string, req: Request): void {
  const body = req.body as Record<string, unknown> | undefined;
  if (!csrfTokenMatches(secretKey, subject, body?.csrf)) {
    throw new OAuthError("invalid_request", "the form has expired or did not come from this site. Go back, reload the page and try again.", {
      status: 403,
    });
  }
}

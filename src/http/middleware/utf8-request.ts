import { isUtf8 } from "node:buffer";
import type { RequestHandler } from "express";
import { OAuthError } from "../../domain/oidc/oauth-error.ts";

/**
 * Whether a request target's query is UTF-8 once its escapes are decoded to
 * bytes. Express's query parser (node:querystring) puts U+FFFD where they
 * are not, so a `state` of `%FF%FE` came back to the client as two
 * replacement characters, and the request went on as if it had sent them.
 * Node reads a target's bytes one to a character (latin1), so a raw byte
 * beyond ASCII is checked as the byte it was.
 */
export function queryIsUtf8(url: string): boolean {
  const at = url.indexOf("?");
  if (at === -1) return true;
  const query = url.slice(at + 1);
  // Escapes of bytes below 0x80 and ASCII text are UTF-8 whatever they spell: only a byte from 0x80 up can break it.
  if (!highEscape.test(query) && !beyondAscii.test(query)) return true;
  // Each escape as the byte it stands for, every other character as its own (latin1) byte; a malformed escape stays text.
  return isUtf8(Buffer.from(query.replace(escape, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), "latin1"));
}

const highEscape = /%[89a-f][0-9a-f]/i;
const beyondAscii = /[\u0080-\uffff]/;
const escape = /%([0-9a-f]{2})/gi;

/** Refuses, as invalid_request, a request whose query is not UTF-8 (see queryIsUtf8); for the OAuth routes that read their query. */
export const utf8Query: RequestHandler = (req, _res, next) => {
  next(queryIsUtf8(req.originalUrl) ? undefined : new OAuthError("invalid_request", "the request's query is not valid UTF-8"));
};

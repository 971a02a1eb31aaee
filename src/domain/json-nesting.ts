/**
 * The deepest nesting of arrays and objects accepted in JSON that comes from
 * outside (RPC bodies, authorization_details, JWTs). JSON.parse takes about
 * 0.15 s over a megabyte of `[[[[…`, the event loop's time for everyone; no
 * message or document of ours nests deeper than a handful of levels.
 */
export const maxJsonDepth = 64;

const quote = 0x22;
const backslash = 0x5c;
const openBracket = 0x5b;
const closeBracket = 0x5d;
const openBrace = 0x7b;
const closeBrace = 0x7d;

/**
 * Whether JSON text (a string, or its UTF-8 bytes) nests arrays and objects
 * no deeper than `maxDepth`, in one pass over its characters: brackets in
 * strings do not count, nothing is built. Not a validator: text that is not
 * JSON may pass, and is refused by the parser after.
 */
export function jsonNestingWithin(json: string | Uint8Array, maxDepth = maxJsonDepth): boolean {
  // UTF-8 bytes of characters beyond ASCII are all 0x80 and above, so bytes can be scanned as they are;
  // one loop over bytes is several times faster than one that asks which kind of input it has.
  const bytes = typeof json === "string" ? Buffer.from(json, "utf8") : json;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === backslash) i++;
      else if (c === quote) inString = false;
    } else if (c === quote) {
      inString = true;
    } else if (c === openBracket || c === openBrace) {
      if (++depth > maxDepth) return false;
    } else if (c === closeBracket || c === closeBrace) {
      depth--;
    }
  }
  return true;
}

/** Whether a compact JWS/JWT's header and payload (base64url JSON) nest no deeper than `maxDepth`; other text passes. */
export function jwtNestingWithin(token: string, maxDepth = maxJsonDepth): boolean {
  const [header = "", payload = ""] = token.split(".", 2);
  return [header, payload].every((part) => jsonNestingWithin(Buffer.from(part, "base64url"), maxDepth));
}

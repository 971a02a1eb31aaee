/**
 * The `htu` comparison of RFC 9449 section 4.3: the URI without its query
 * and fragment, in the normal form the URL parser gives (scheme and host in
 * lower case, default port left out). Undefined when it is not an absolute
 * http(s) URI.
 */
export function comparableHtu(value: string): string | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  return `${url.origin}${url.pathname}`;
}

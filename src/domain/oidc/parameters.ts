import { OAuthError } from "./oauth-error.ts";

/** Query or form parameters as Express parses them: repeated names become arrays. */
export type RawParameters = Record<string, unknown>;

/**
 * One value per name (RFC 6749 §3.1: parameters must not be included more than
 * once). Empty values count as absent (§3.1: "parameters sent without a value
 * MUST be treated as if they were omitted"). Names other than `known` are
 * ignored, as OAuth requires, even when repeated.
 */
export function singleValues(raw: RawParameters, known: readonly string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (const name of known) {
    const value = raw[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) throw new OAuthError("invalid_request", `parameter ${name} is repeated`);
    if (typeof value !== "string") throw new OAuthError("invalid_request", `parameter ${name} is malformed`);
    if (value !== "") values.set(name, value);
  }
  return values;
}

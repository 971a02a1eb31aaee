import * as z from "zod";
import { jsonNestingWithin, maxJsonDepth } from "../json-nesting.ts";
import { OAuthError } from "./oauth-error.ts";

/** One entry of RFC 9396 authorization_details: an object with a string `type` and any other members. */
export type AuthorizationDetail = { type: string } & Record<string, unknown>;

/** An AuthorizationDetail as a stored record gives it back (see one-time-kinds.ts). */
export const authorizationDetailSchema: z.ZodType<AuthorizationDetail> = z.looseObject({ type: z.string() });

const maxDetails = 50;

/**
 * RFC 9396 §2 / §5: a JSON array of objects, each with a `type` string the
 * client is allowed to request. Anything else is invalid_authorization_details.
 */
export function parseAuthorizationDetails(value: string | undefined, allowedTypes: readonly string[]): AuthorizationDetail[] {
  if (value === undefined) return [];
  // Before the parser, which would spend the event loop on a deep enough document (json-nesting.ts).
  if (!jsonNestingWithin(value)) {
    throw new OAuthError("invalid_request", `authorization_details nests arrays and objects more than ${maxJsonDepth} levels deep`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new OAuthError("invalid_authorization_details", "authorization_details is not valid JSON");
  }
  if (!Array.isArray(parsed)) throw new OAuthError("invalid_authorization_details", "authorization_details must be a JSON array");
  if (parsed.length > maxDetails) throw new OAuthError("invalid_authorization_details", `authorization_details has more than ${maxDetails} entries`);
  return parsed.map((entry, i) => {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      throw new OAuthError("invalid_authorization_details", `authorization_details[${i}] must be an object`);
    }
    const type = (entry as { type?: unknown }).type;
    if (typeof type !== "string" || type === "") {
      throw new OAuthError("invalid_authorization_details", `authorization_details[${i}].type must be a non-empty string`);
    }
    if (!allowedTypes.includes(type)) {
      throw new OAuthError("invalid_authorization_details", `authorization_details type ${type} is not allowed for this client`);
    }
    return entry as AuthorizationDetail;
  });
}

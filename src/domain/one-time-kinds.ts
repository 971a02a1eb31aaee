import * as z from "zod";
import { authorizationRequestSchema } from "./oidc/authorization-request.ts";
import { authorizationCodePayloadSchema } from "./oidc/flow/authorization-code.ts";

/**
 * The closed list of single-use record kinds, each with the schema of the
 * payload it carries. A record's payload is checked against its kind's schema
 * whenever a store reads it back (see readOneTimeRecord), so a rule never
 * works on a payload of another shape: a row written by other code, edited by
 * hand or left by an older release is an internal error, not a wrong answer.
 */
const payloadSchemas = {
  /** An authorization code: what the token endpoint redeems it for. */
  authorization_code: authorizationCodePayloadSchema,
  /** A pushed authorization request (RFC 9126), used once at the authorization endpoint. */
  request_uri: authorizationRequestSchema,
  /** A client assertion's jti, used once (RFC 7523 section 3): the record itself is the mark. */
  client_assertion_jti: z.null(),
  /** A code or refresh token family found replayed (see TokenService.revokeReplayed): the record itself is the mark. */
  replayed_family: z.null(),
  /** A JPKI sign-in challenge, bound to its browser by the record's owner. */
  jpki_challenge: z.strictObject({}),
  /** A passkey registration's challenge, with the random user handle the new credential gets; bound by the owner. */
  webauthn_registration: z.strictObject({ userHandle: z.string().regex(/^[A-Za-z0-9_-]{43}$/) }),
  /** A passkey sign-in or step-up challenge, bound to its page by the record's owner. */
  webauthn_authentication: z.strictObject({}),
};

export type OneTimeKind = keyof typeof payloadSchemas;

/** The payload each kind carries. */
export type OneTimePayloads = { [K in OneTimeKind]: z.infer<(typeof payloadSchemas)[K]> };

export const oneTimeKinds = Object.keys(payloadSchemas) as OneTimeKind[];

/**
 * A stored payload that is not what its kind carries. It names the kind and
 * where the payload differs (paths and zod issue codes), never a value: a
 * payload may hold a nonce, a code challenge or a user's id, and this error
 * reaches the logs.
 */
export class OneTimePayloadMismatch extends Error {
  override name = "OneTimePayloadMismatch";
  constructor(
    readonly kind: string,
    readonly problems: readonly string[],
  ) {
    super(`a one-time record of kind ${kind} holds a payload that kind does not carry (${problems.join("; ")})`);
  }
}

/** The payload, checked against its kind's schema; throws OneTimePayloadMismatch. */
export function checkedPayload<K extends OneTimeKind>(kind: K, payload: unknown): OneTimePayloads[K] {
  const schema: z.ZodType | undefined = Object.hasOwn(payloadSchemas, kind) ? payloadSchemas[kind] : undefined;
  if (!schema) throw new OneTimePayloadMismatch(kind, ["no such kind"]);
  const result = schema.safeParse(payload);
  if (!result.success) {
    throw new OneTimePayloadMismatch(
      kind,
      result.error.issues.map((issue) => `${issue.path.length ? issue.path.join(".") : "payload"}: ${issue.code}`),
    );
  }
  return result.data as OneTimePayloads[K];
}

import * as z from "zod";
import { authorizationDetailSchema } from "../authorization-details.ts";

/**
 * What an authorization code stands for, as its one-time record keeps it
 * (see one-time-kinds.ts); the token endpoint redeems it. The type is read
 * from the schema, so the two cannot drift apart.
 */
export const authorizationCodePayloadSchema = z.strictObject({
  clientId: z.string(),
  redirectUri: z.string(),
  codeChallenge: z.string().nullable(),
  nonce: z.string().nullable(),
  scopes: z.array(z.string()),
  authorizationDetails: z.array(authorizationDetailSchema),
  grantId: z.string(),
  userId: z.string(),
  authTime: z.number(),
  acr: z.string(),
  amr: z.array(z.string()),
  /** The session's `sid` (see sessionSid). */
  sid: z.string().optional(),
  /** The request's claims_locales: the languages of the name claims (OIDC Core 5.2). */
  claimsLocales: z.array(z.string()).optional(),
  /** The DPoP key the code is bound to (RFC 9449 section 10): it is redeemed only with a proof of that key. */
  dpopJkt: z.string().optional(),
});

export type AuthorizationCodePayload = z.infer<typeof authorizationCodePayloadSchema>;

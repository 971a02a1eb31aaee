import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import * as z from "zod";
import { PasskeyError } from "./passkey-error.ts";

/**
 * The browser's answer to a ceremony, as the page's form carries it (the
 * JSON that @simplewebauthn/browser gives): parsed at this one boundary, so
 * that anything malformed is a clear refusal, never an exception further in.
 */
const b64url = z.string().regex(/^[A-Za-z0-9_-]*$/).max(16 * 1024);

const common = {
  id: b64url.min(1).max(1366),
  rawId: b64url.min(1).max(1366),
  type: z.literal("public-key"),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
};

const registrationSchema = z.object({
  ...common,
  response: z.object({
    clientDataJSON: b64url,
    attestationObject: b64url,
    transports: z.array(z.string().max(32)).max(10).optional(),
    authenticatorData: b64url.optional(),
    publicKey: b64url.optional(),
    publicKeyAlgorithm: z.number().int().optional(),
  }),
});

const authenticationSchema = z.object({
  ...common,
  response: z.object({
    clientDataJSON: b64url,
    authenticatorData: b64url,
    signature: b64url,
    userHandle: b64url.optional(),
  }),
});

const clientDataSchema = z.object({ challenge: z.string().max(512) });

/** At most what a form field of the pages may carry. */
const maxLength = 48 * 1024;

function parse<T>(text: string, schema: z.ZodType<T>): T {
  if (text.length === 0 || text.length > maxLength) throw invalid();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid();
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalid();
  return parsed.data;
}

function invalid(): PasskeyError {
  return new PasskeyError("response_invalid", "The browser's passkey answer is not one this page can read.");
}

export function parseRegistrationResponse(text: string): RegistrationResponseJSON {
  return parse(text, registrationSchema) as RegistrationResponseJSON;
}

export function parseAuthenticationResponse(text: string): AuthenticationResponseJSON {
  return parse(text, authenticationSchema) as AuthenticationResponseJSON;
}

/** The challenge the browser says it signed (checked against our own, and its signature, by the verification). */
export function challengeOf(response: { response: { clientDataJSON: string } }): string {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(response.response.clientDataJSON, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  const parsed = clientDataSchema.safeParse(value);
  if (!parsed.success) throw invalid();
  return parsed.data.challenge;
}

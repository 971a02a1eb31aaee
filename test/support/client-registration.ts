import { expect } from "vitest";
import { jsonOrUndefined } from "./oidc.ts";
import type { TestServer } from "./server.ts";

export const registrationPath = "/api/oidc/v1/register";

/** One answer of the registration or a configuration endpoint. */
export interface RegistrationReply {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown> | undefined;
}

async function reply(response: Response): Promise<RegistrationReply> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: jsonOrUndefined(text) };
}

/** POSTs client metadata to the registration endpoint: JSON unless a string body is given (its type then in `headers`). */
export async function postRegistration(server: TestServer, body: unknown, headers: Record<string, string> = {}): Promise<RegistrationReply> {
  return reply(
    await fetch(new URL(registrationPath, server.url), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

/** A call to a client's configuration endpoint (RFC 7592) with its registration access token, or none. */
export async function manage(uri: string, method: "GET" | "PUT" | "DELETE", token: string | undefined, body?: unknown): Promise<RegistrationReply> {
  return reply(
    await fetch(uri, {
      method,
      headers: {
        accept: "application/json",
        ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
    }),
  );
}

/** The configuration endpoint's URL at the test server (the issuer's host name is localhost, the server listens on 127.0.0.1). */
export function reachable(server: TestServer, registrationClientUri: unknown): string {
  expect(typeof registrationClientUri).toBe("string");
  const uri = new URL(registrationClientUri as string);
  return new URL(uri.pathname, server.url).href;
}

/** Asserts an RFC 7591 error answer: status, code, a description, never cached. */
export function expectRegistrationError(answer: RegistrationReply, status: number, error: string): string {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.json?.error, answer.text).toBe(error);
  expect(answer.json?.error_description).toMatch(/\S/);
  expect(answer.headers.get("cache-control")).toBe("no-store");
  return answer.json!.error_description as string;
}

/** Asserts the 401 of a missing or wrong registration credential, with its Bearer challenge. */
export function expectInvalidToken(answer: RegistrationReply): void {
  expectRegistrationError(answer, 401, "invalid_token");
  expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer realm="shomei", error="invalid_token"/);
}

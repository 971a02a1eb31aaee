import { expect } from "vitest";
import { pkce, type ParReply } from "./oidc.ts";
import type { TestServer } from "./server.ts";

/* The clients the pushed authorization request tests register, and what they expect of every answer (test/service/oidc-par*.test.ts). */

export const clientSecrets = {
  basic: "par-basic-secret-0123456789",
  post: "par-post-secret-0123456789",
  required: "par-required-secret-0123456789",
};
export const redirects = {
  basic: "https://basic.example/cb",
  post: "https://post.example/cb",
  jwt: "https://jwt.example/cb",
  required: "https://required.example/cb",
};
export const clientIds = { basic: "par-basic", post: "par-post", jwt: "par-jwt", required: "par-required", public: "par-public", otherPublic: "par-public-2" };
export const publicRedirect = "https://public.example/cb";
export type Method = "basic" | "post" | "jwt";

/** A valid request body (without credentials) for a client; overrides replace (undefined removes) parameters. */
export const request = (method: Method | "required", overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> => ({
  redirect_uri: redirects[method],
  response_type: "code",
  scope: "openid",
  state: `state ${method} & ü`,
  code_challenge: pkce().challenge,
  code_challenge_method: "S256",
  ...overrides,
});

export function expectOAuthError(reply: ParReply, status: number, error: string): void {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.location).toBeUndefined();
  expect(reply.headers.get("content-type")).toMatch(/^application\/json/);
  expect(reply.headers.get("cache-control")).toBe("no-store");
  expect(reply.json?.error, reply.text).toBe(error);
  expect(reply.json?.error_description).toMatch(/\S/);
  expect(reply.json).not.toHaveProperty("request_uri");
}

export const requestUriCount = async (s: TestServer) =>
  (await s.database.db.selectFrom("one_time_records").select("key_hash").where("kind", "=", "request_uri").execute()).length;

import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from "jose";
import { describe, expect, it } from "vitest";
import { registrationFromMetadata } from "../../src/domain/oidc/client-registration.ts";
import type { OidcClient } from "../../src/domain/oidc/client.ts";
import { RequestObjects } from "../../src/domain/oidc/request-object.ts";
import { inlineClientKeys } from "../support/client-keys.ts";

/** Signed request objects (RFC 9101) as the domain reads them, on a clock the test sets. */

const issuer = "https://id.example";
const now = Date.UTC(2026, 0, 1);
const seconds = Math.floor(now / 1000);

async function setup(metadata: Record<string, unknown> = {}) {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const { client } = registrationFromMetadata(
    { client_id: "rp", token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [await exportJWK(publicKey)] }, redirect_uris: ["https://rp.example/cb"], ...metadata },
    now,
  );
  // The claims given win over the defaults (the builder's setters would overwrite them).
  const sign = (claims: JWTPayload, typ: string | undefined = "oauth-authz-req+jwt") =>
    new SignJWT({ client_id: "rp", iss: "rp", aud: issuer, iat: seconds, exp: seconds + 60, ...claims })
      .setProtectedHeader({ alg: "ES256", ...(typ ? { typ } : {}) })
      .sign(privateKey);
  return { client, sign, objects: new RequestObjects(issuer, inlineClientKeys(() => now), () => now, 30) };
}

async function refusal(objects: RequestObjects, client: OidcClient, params: Map<string, string>): Promise<{ error: string; description: string }> {
  return objects.parameters(client, params).then(
    () => {
      throw new Error("accepted");
    },
    (e: { error: string; description: string }) => ({ error: e.error, description: e.description }),
  );
}

describe("RequestObjects", () => {
  it("turns the object's claims into the request's parameters, numbers and JSON as a query carries them; nothing else counts", async () => {
    const { client, sign, objects } = await setup();
    const request = await sign({ scope: "openid", max_age: 600, authorization_details: [{ type: "x" }], unknown: "y" });
    const params = await objects.parameters(client, new Map([["client_id", "rp"], ["request", request], ["scope", "openid email"], ["state", "outer"]]));
    expect(Object.fromEntries(params)).toEqual({ client_id: "rp", scope: "openid", max_age: "600", authorization_details: '[{"type":"x"}]' });
  });

  it("accepts an object without typ, refuses one of another typ", async () => {
    const { client, sign, objects } = await setup();
    await expect(objects.parameters(client, new Map([["request", await sign({}, undefined)]]))).resolves.toBeInstanceOf(Map);
    expect(await refusal(objects, client, new Map([["request", await sign({}, "JWT")]]))).toEqual({
      error: "invalid_request_object",
      description: "the request object's typ must be oauth-authz-req+jwt",
    });
  });

  it("refuses request beside request_uri, and an object carrying request_uri", async () => {
    const { client, sign, objects } = await setup();
    expect((await refusal(objects, client, new Map([["request", await sign({})], ["request_uri", "urn:x"]]))).error).toBe("invalid_request");
    expect(await refusal(objects, client, new Map([["request", await sign({ request_uri: "urn:x" })]]))).toEqual({
      error: "invalid_request_object",
      description: "a request object must not carry request_uri",
    });
  });

  it("refuses exp more than 60 minutes ahead and nbf more than 60 minutes ago", async () => {
    const { client, sign, objects } = await setup();
    expect((await refusal(objects, client, new Map([["request", await sign({ exp: seconds + 3631 })]]))).description).toMatch(/60 minutes ahead/);
    expect((await refusal(objects, client, new Map([["request", await sign({ nbf: seconds - 3601 })]]))).description).toMatch(/60 minutes ago/);
    await expect(objects.parameters(client, new Map([["request", await sign({ exp: seconds + 3600, nbf: seconds - 3600 })]]))).resolves.toBeInstanceOf(Map);
  });

  it("passes plain requests through, unless the client requires signed objects", async () => {
    const plain = await setup();
    const params = new Map([["scope", "openid"]]);
    expect(await plain.objects.parameters(plain.client, params)).toBe(params);
    const strict = await setup({ require_signed_request_object: true });
    expect((await refusal(strict.objects, strict.client, params)).error).toBe("invalid_request");
  });
});

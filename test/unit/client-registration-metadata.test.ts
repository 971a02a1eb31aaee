import { describe, expect, it } from "vitest";
import { defaultAcrPolicy } from "../../src/domain/oidc/acr.ts";
import { registrationFromMetadata } from "../../src/domain/oidc/client-registration.ts";
import { clientAuthMethods, defaultClientAuthMethod, usesClientSecret } from "../../src/domain/oidc/client.ts";
import { providerMetadata } from "../../src/domain/oidc/discovery.ts";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { OAuthError } from "../../src/domain/oidc/oauth-error.ts";
import { bearerValue, tokenMatches } from "../../src/domain/oidc/registration/bearer-credential.ts";
import { parsedMetadataJson, registrationAnswer, requestedMetadata, validatedClient } from "../../src/domain/oidc/registration/registration-metadata.ts";

/** The OAuth error `run` throws. */
function refusal(run: () => unknown): OAuthError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError);
    return error as OAuthError;
  }
  throw new Error("expected an OAuthError");
}

const redirect = { redirect_uris: ["https://rp.example/cb"] };

describe("registration metadata: one validation with shomei client add", () => {
  it("keeps the members client add understands and drops the others (RFC 7591 section 2)", () => {
    const { metadata } = requestedMetadata({ ...redirect, client_name: "RP", logo_uri: "https://rp.example/l.png", contacts: ["a@rp.example"], client_id_issued_at: 1 }, "register");
    expect(metadata).toEqual({ ...redirect, client_name: "RP" });
  });

  it("gives the same client as client add for the same metadata, but for its generated secret", () => {
    const given = { ...redirect, scope: "openid email", grant_types: ["authorization_code"], id_token_signed_response_alg: "RS256" };
    const viaRegistration = validatedClient(requestedMetadata(given, "register").metadata, "id-1", null, 1000);
    const viaCli = registrationFromMetadata({ ...given, client_id: "id-1" }, 1000);
    expect({ ...viaRegistration.client, secretHash: null }).toEqual({ ...viaCli.client, secretHash: null });
    expect(viaRegistration.client.secretHash).toBe(sha256Hex(viaRegistration.generatedSecret!));
  });

  it("names the refusals as RFC 7591 does: redirect URIs apart from the rest", () => {
    expect(refusal(() => validatedClient({ redirect_uris: ["http://rp.example/cb"] }, "id", null, 0)).error).toBe("invalid_redirect_uri");
    expect(refusal(() => validatedClient({}, "id", null, 0)).error).toBe("invalid_redirect_uri");
    expect(refusal(() => validatedClient({ ...redirect, post_logout_redirect_uris: ["ftp://x"] }, "id", null, 0)).error).toBe("invalid_client_metadata");
    expect(refusal(() => validatedClient({ ...redirect, scope: 5 }, "id", null, 0)).error).toBe("invalid_client_metadata");
  });

  it("refuses what the server assigns, response types it does not issue, and software statements", () => {
    expect(refusal(() => requestedMetadata({ ...redirect, client_id: "x" }, "register")).description).toBe("client_id: is assigned by the server");
    expect(refusal(() => requestedMetadata({ ...redirect, client_secret_sha256: "0".repeat(64) }, "update")).error).toBe("invalid_client_metadata");
    expect(refusal(() => requestedMetadata({ ...redirect, response_types: ["id_token"] }, "register")).error).toBe("invalid_client_metadata");
    expect(requestedMetadata({ ...redirect, response_types: ["code"] }, "register").metadata).toEqual(redirect);
    expect(refusal(() => requestedMetadata({ ...redirect, software_statement: "a.b.c" }, "register")).error).toBe("unapproved_software_statement");
    expect(refusal(() => requestedMetadata({ ...redirect, software_statement: 7 }, "register")).error).toBe("invalid_software_statement");
    // On update, client_id and client_secret are the service's to compare with the stored client.
    expect(requestedMetadata({ ...redirect, client_id: "x", client_secret: "s" }, "update")).toMatchObject({ clientId: "x", clientSecret: "s", metadata: redirect });
  });

  it("on update keeps the stored secret while the method uses one, and drops it when it stops", () => {
    const kept = validatedClient({ ...redirect, token_endpoint_auth_method: "client_secret_post" }, "id", "a".repeat(64), 0);
    expect(kept.client.secretHash).toBe("a".repeat(64));
    expect(kept.generatedSecret).toBeUndefined();
    expect(validatedClient({ ...redirect, token_endpoint_auth_method: "none" }, "id", "a".repeat(64), 0).client.secretHash).toBeNull();
  });

  it("keeps the stored secret when the update leaves the method out (the default uses one), as client add's one rule says", () => {
    expect(validatedClient(redirect, "id", "a".repeat(64), 0).client.secretHash).toBe("a".repeat(64));
    expect(validatedClient({ ...redirect, token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [{ kty: "EC", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0" }] } }, "id", "a".repeat(64), 0).client.secretHash).toBeNull();
    expect(usesClientSecret(defaultClientAuthMethod)).toBe(true);
    expect(clientAuthMethods.filter(usesClientSecret)).toEqual(["client_secret_basic", "client_secret_post"]);
    expect(usesClientSecret(undefined)).toBe(false);
  });

  it("parses JSON at one boundary: bad or too deep JSON is invalid_client_metadata", () => {
    expect(parsedMetadataJson('{"a":1}')).toEqual({ a: 1 });
    expect(refusal(() => parsedMetadataJson("{")).error).toBe("invalid_client_metadata");
    expect(refusal(() => parsedMetadataJson("[".repeat(100) + "]".repeat(100))).description).toMatch(/more than 64 levels deep/);
    expect(refusal(() => requestedMetadata([], "register")).description).toBe("the client metadata must be a JSON object");
  });

  it("answers with the registered metadata, the secret only when given, client_secret_expires_at 0 for secret clients", () => {
    const { client } = validatedClient(redirect, "id", null, 5_000);
    const issued = { registrationAccessToken: "t", registrationClientUri: "https://op/register/id" };
    expect(registrationAnswer(client, { ...issued, clientSecret: "s" })).toMatchObject({ client_id: "id", client_id_issued_at: 5, client_secret: "s", client_secret_expires_at: 0, registration_access_token: "t" });
    expect(registrationAnswer(client, issued)).not.toHaveProperty("client_secret");
    const pub = validatedClient({ ...redirect, token_endpoint_auth_method: "none" }, "id", null, 0).client;
    expect(registrationAnswer(pub, issued)).not.toHaveProperty("client_secret_expires_at");
  });

  it("registers a fapi2 client or one requiring signed request objects, says so in the answer, and refuses one that breaks a rule", () => {
    const jwks = { keys: [{ kty: "EC", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tJ8aN_nTj_Js_5_2dC1Mm4dr0sVc" }] };
    const given = { ...redirect, profile: "fapi2", require_signed_request_object: true, token_endpoint_auth_method: "private_key_jwt", jwks };
    const { client } = validatedClient(requestedMetadata(given, "register").metadata, "id", null, 0);
    const issued = { registrationAccessToken: "t", registrationClientUri: "https://op/register/id" };
    expect(registrationAnswer(client, issued)).toMatchObject({ profile: "fapi2", require_signed_request_object: true, require_pushed_authorization_requests: true, dpop_bound_access_tokens: true });
    expect(registrationAnswer(validatedClient(redirect, "id", null, 0).client, issued)).not.toHaveProperty("profile");
    const secret = refusal(() => validatedClient({ ...redirect, profile: "fapi2" }, "id", null, 0));
    expect(secret.error).toBe("invalid_client_metadata");
    expect(secret.description).toBe("token_endpoint_auth_method: the fapi2 profile authenticates clients by private_key_jwt");
  });
});

describe("registration credentials", () => {
  it("reads only a Bearer token", () => {
    expect(bearerValue("Bearer abc_-.~+/=")).toBe("abc_-.~+/=");
    expect(bearerValue("bearer abc")).toBe("abc");
    expect(bearerValue("Basic abc")).toBeUndefined();
    expect(bearerValue("Bearer a b")).toBeUndefined();
    expect(bearerValue(undefined)).toBeUndefined();
  });

  it("matches a token against its stored hash only", () => {
    expect(tokenMatches("t", sha256Hex("t"))).toBe(true);
    expect(tokenMatches("u", sha256Hex("t"))).toBe(false);
    expect(tokenMatches(undefined, sha256Hex(""))).toBe(false);
    expect(tokenMatches("t", undefined)).toBe(false);
  });
});

describe("discovery", () => {
  const endpoints = { authorization: "a", par: "p", token: "t", userinfo: "u", jwks: "j", revocation: "r", introspection: "i", grants: "g", registration: "https://id.example/reg" };
  const inputs = { issuer: "https://id.example", endpoints, policy: defaultAcrPolicy, advertiseAuthorizationResponseIss: true, authorizationDetailsTypes: [], uiLocales: ["en"] };

  it("names registration_endpoint only while registration is on", () => {
    expect(providerMetadata(inputs)).not.toHaveProperty("registration_endpoint");
    expect(providerMetadata({ ...inputs, registrationEnabled: false })).not.toHaveProperty("registration_endpoint");
    expect(providerMetadata({ ...inputs, registrationEnabled: true }).registration_endpoint).toBe("https://id.example/reg");
  });
});

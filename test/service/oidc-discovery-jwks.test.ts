import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from "jose";
import { registerClient } from "../support/oidc.ts";
import { databaseTargets, targetTitle } from "../support/databases.ts";
import { paths, clients, resourceServer } from "../support/oidc-resource-server.ts";

/**
 * Discovery metadata and the JWKS with key rotation, through real HTTP on every database target.
 */

const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    const provider = resourceServer(target);
    const { live, call, tokensFor, fetchJwks } = provider;
    let issuer: string;
    beforeAll(() => {
      issuer = provider.issuer();
    });

    describe("discovery", () => {
      const documents = ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"];

      it.each(documents)("%s describes the provider", async (document) => {
        const s = live();
        const reply = await call("GET", document);
        expect(reply.status, reply.text).toBe(200);
        expect(reply.headers.get("content-type")).toMatch(/^application\/json/);
        const m = reply.json!;
        // The base URL is derived from the bound port (the test server listens on port 0).
        const base = s.config.baseUrl;
        expect(base).toBe(`http://localhost:${s.port}`);
        expect(m.issuer).toBe(base);
        expect(m.issuer).toBe(issuer);
        expect(m.authorization_endpoint).toBe(`${base}/api/oidc/v1/authorize`);
        expect(m.token_endpoint).toBe(`${base}${paths.token}`);
        expect(m.userinfo_endpoint).toBe(`${base}${paths.userinfo}`);
        expect(m.jwks_uri).toBe(`${base}${paths.jwks}`);
        expect(m.pushed_authorization_request_endpoint).toBe(`${base}/api/oidc/v1/par`);
        expect(m.revocation_endpoint).toBe(`${base}${paths.revoke}`);
        expect(m.introspection_endpoint).toBe(`${base}${paths.introspect}`);
        expect(m.grant_management_endpoint).toBe(`${base}${paths.grants}`);
        expect(m.response_types_supported).toEqual(["code"]);
        expect(m.response_modes_supported).toEqual(["query"]);
        expect(m.grant_types_supported).toEqual(["authorization_code", "refresh_token", "client_credentials"]);
        expect(m.code_challenge_methods_supported).toEqual(["S256"]);
        expect(m.id_token_signing_alg_values_supported).toEqual(["ES256", "RS256", "PS256", "EdDSA"]);
        expect(m.subject_types_supported).toEqual(["public"]);
        expect([...(m.token_endpoint_auth_methods_supported as string[])].sort()).toEqual(
          ["client_secret_basic", "client_secret_post", "none", "private_key_jwt"],
        );
        // Revocation and introspection are for clients that authenticate: never "none".
        for (const field of ["revocation_endpoint_auth_methods_supported", "introspection_endpoint_auth_methods_supported"]) {
          expect([...(m[field] as string[])].sort(), field).toEqual(["client_secret_basic", "client_secret_post", "private_key_jwt"]);
        }
        expect(m.authorization_response_iss_parameter_supported).toBe(true);
        expect(m.acr_values_supported).toEqual(["low", "high", "very_high"]);

        expect(m.scopes_supported).toEqual(expect.arrayContaining(["openid", "profile", "email", "offline_access"]));
        expect(m.claims_supported).toEqual(expect.arrayContaining(["sub", "name", "preferred_username", "email"]));
        expect(m.prompt_values_supported).toEqual(expect.arrayContaining(["none", "login", "consent"]));
        expect(m.authorization_details_types_supported).toEqual(expect.arrayContaining(["payment_initiation"]));
        expect([...(m.grant_management_actions_supported as string[])].sort()).toEqual(["create", "merge", "replace"]);
        expect(m.grant_management_action_required).toBe(false);
        expect(m.require_pushed_authorization_requests).toBe(false);
      });

      it("both documents are the same", async () => {
        const [a, b] = await Promise.all(documents.map((d) => call("GET", d)));
        expect(a!.json).toEqual(b!.json);
      });

      it("every endpoint is an absolute URL under the issuer and answers on this server", async () => {
        const m = (await call("GET", documents[0]!)).json!;
        const fields = [
          "authorization_endpoint",
          "token_endpoint",
          "userinfo_endpoint",
          "jwks_uri",
          "pushed_authorization_request_endpoint",
          "revocation_endpoint",
          "introspection_endpoint",
          "grant_management_endpoint",
          "end_session_endpoint",
        ];
        const urls: Record<string, string> = {};
        for (const field of fields) {
          const value = m[field];
          expect(typeof value, field).toBe("string");
          expect(URL.canParse(value as string), field).toBe(true);
          expect((value as string).startsWith(`${issuer}/`), `${field} = ${String(value)}`).toBe(true);
          urls[field] = value as string;
        }
        // Each is called the way clients call it; what it answers is its own refusal of an empty request, never 404.
        const answer = async (method: string, url: string, form?: Record<string, string>) => {
          const reply = await call(method, url, form ? { form } : {});
          expect(reply.status, `${method} ${url}: ${reply.text}`).not.toBe(404);
          return reply.status;
        };
        const authorization = await fetch(urls.authorization_endpoint!, { redirect: "manual" });
        expect(authorization.status).toBe(400);
        expect(await authorization.text()).toContain("<code>invalid_request</code>");
        expect(await answer("POST", urls.token_endpoint!, { grant_type: "authorization_code" })).toBe(401);
        expect(await answer("GET", urls.userinfo_endpoint!)).toBe(401);
        expect(await answer("POST", urls.userinfo_endpoint!)).toBe(401);
        expect(await answer("GET", urls.jwks_uri!)).toBe(200);
        expect(await answer("POST", urls.pushed_authorization_request_endpoint!, { response_type: "code" })).toBe(401);
        expect(await answer("POST", urls.revocation_endpoint!, { token: "x" })).toBe(401);
        expect(await answer("POST", urls.introspection_endpoint!, { token: "x" })).toBe(401);
        expect(await answer("GET", `${urls.grant_management_endpoint!}/some-grant`)).toBe(401);
        expect(await answer("DELETE", `${urls.grant_management_endpoint!}/some-grant`)).toBe(401);
        await answer("GET", urls.end_session_endpoint!);
        // A path the provider does not serve is a 404 here, so the checks above tell something.
        expect((await call("GET", "/api/oidc/v1/no-such-endpoint")).status).toBe(404);
      });

      it("authorization_details_types_supported follows the registered clients", async () => {
        const type = `tax_return_${randomBytes(4).toString("hex")}`;
        for (const document of documents) {
          expect((await call("GET", document)).json!.authorization_details_types_supported).not.toContain(type);
        }
        await registerClient(live(), {
          client_id: `rs-typed-${randomBytes(4).toString("hex")}`,
          client_secret: "rs-typed-secret-0123456789abcdef",
          redirect_uris: ["https://typed.example/cb"],
          scope: "openid",
          authorization_details_types: [type, "payment_initiation"],
        });
        for (const document of documents) {
          const types = (await call("GET", document)).json!.authorization_details_types_supported as string[];
          expect(types).toContain(type);
          expect(types).toContain("payment_initiation");
          // Each type once, in order.
          expect(types).toEqual([...new Set(types)].sort());
        }
      });
    });

    describe("JWKS", () => {
      it("publishes public members only, with kid, alg and use", async () => {
        const reply = await call("GET", paths.jwks);
        expect(reply.status).toBe(200);
        expect(reply.headers.get("content-type")).toMatch(/^application\/jwk-set\+json/);
        const keys = (reply.json as unknown as JSONWebKeySet).keys;
        // In discovery's order (other tests here rotate keys, so an algorithm may have a retired key too).
        expect([...new Set(keys.map((k) => k.alg))]).toEqual(["ES256", "RS256", "PS256", "EdDSA"]);
        for (const key of keys) {
          if (key.alg === "ES256") {
            expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x", "y"]);
            expect(key).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: expect.stringMatching(/\S/) });
          } else if (key.alg === "EdDSA") {
            expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
            expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig", kid: expect.stringMatching(/\S/) });
          } else {
            expect(Object.keys(key).sort()).toEqual(["alg", "e", "kid", "kty", "n", "use"]);
            expect(key).toMatchObject({ kty: "RSA", e: "AQAB", alg: expect.stringMatching(/^[RP]S256$/), use: "sig", kid: expect.stringMatching(/\S/) });
          }
          expect(key).not.toHaveProperty("d");
        }
        expect(reply.text).not.toMatch(/"d"\s*:/);
        expect(new Set(keys.map((k) => k.kid)).size).toBe(keys.length);
      });

      it("the ID token's kid is published and the token verifies against the JWKS", async () => {
        const issued = await tokensFor("app", "openid");
        const header = decodeProtectedHeader(issued.idToken!);
        expect(header.alg).toBe("ES256");
        const jwks = await fetchJwks();
        expect(jwks.keys.map((k) => k.kid)).toContain(header.kid);
        const { payload } = await jwtVerify(issued.idToken!, createLocalJWKSet(jwks), { issuer, audience: clients.app.id });
        expect(payload.sub).toBe(issued.user.row.id);
      });

      it("after rotate() new ID tokens carry the new kid and the old kid stays published", async () => {
        const s = live();
        const before = await tokensFor("app", "openid");
        const oldKid = decodeProtectedHeader(before.idToken!).kid!;
        expect((await fetchJwks()).keys.map((k) => k.kid)).toContain(oldKid);

        const rotated = await s.domain.oidc.signingKeys.rotate("ES256");
        expect(rotated.newKid).not.toBe(oldKid);
        expect(rotated.retiredKid).toBe(oldKid);

        const after = await tokensFor("app", "openid");
        expect(decodeProtectedHeader(after.idToken!).kid).toBe(rotated.newKid);

        const jwks = await fetchJwks();
        const kids = jwks.keys.map((k) => k.kid);
        expect(kids).toContain(oldKid);
        expect(kids).toContain(rotated.newKid);
        const keySet = createLocalJWKSet(jwks);
        const old = await jwtVerify(before.idToken!, keySet, { issuer, audience: clients.app.id });
        expect(old.protectedHeader.kid).toBe(oldKid);
        expect(old.payload.sub).toBe(before.user.row.id);
        const fresh = await jwtVerify(after.idToken!, keySet, { issuer, audience: clients.app.id });
        expect(fresh.payload.sub).toBe(after.user.row.id);

        // The old token, verified against only the new key, fails: the old key is what makes it verify.
        const onlyNew = createLocalJWKSet({ keys: jwks.keys.filter((k) => k.kid === rotated.newKid) });
        await expect(jwtVerify(before.idToken!, onlyNew, { issuer, audience: clients.app.id })).rejects.toThrow();
      });
    });
  });
}

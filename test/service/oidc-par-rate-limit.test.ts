import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { dpopKey, dpopProof } from "../support/dpop.ts";
import { basicAuthorization, pkce, postPar, registerClient, type ParReply } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { clientIds, clientSecrets, expectOAuthError, publicRedirect, redirects, request, requestUriCount } from "../support/oidc-par-clients.ts";

/**
 * The pushed authorization request endpoint's limit on public clients (spec 4.2), counted in the
 * database so that every instance sharing it counts alike, on every database target.
 */

const targets = await databaseTargets();

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    describe("the public clients' rate limit (per client_id and per address, in the database)", () => {
      // A database of its own, so that no other request from this address counts.
      let limitedDatabase: ScratchDatabase | undefined;
      let first: TestServer | undefined;
      let second: TestServer | undefined;

      beforeAll(async () => {
        limitedDatabase = await target.create();
        first = await startTestServer(limitedDatabase.url, { publicParMaxPerClient: 2, publicParMaxPerAddress: 3 });
        second = await startTestServer(limitedDatabase.url, { publicParMaxPerClient: 2, publicParMaxPerAddress: 3 });
        for (const clientId of [clientIds.public, clientIds.otherPublic]) {
          await registerClient(first, { client_id: clientId, token_endpoint_auth_method: "none", redirect_uris: [publicRedirect], scope: "openid" });
        }
        await registerClient(first, {
          client_id: clientIds.basic,
          token_endpoint_auth_method: "client_secret_basic",
          client_secret: clientSecrets.basic,
          redirect_uris: [redirects.basic],
          scope: "openid",
        });
      });

      afterAll(async () => {
        await first?.close();
        await second?.close();
        await limitedDatabase?.drop();
      });

      const publicForm = (clientId: string) => ({
        client_id: clientId,
        redirect_uri: publicRedirect,
        response_type: "code",
        scope: "openid",
        code_challenge: pkce().challenge,
        code_challenge_method: "S256",
      });

      function expectLimited(reply: ParReply): void {
        expectOAuthError(reply, 429, "temporarily_unavailable");
        const retryAfter = Number(reply.headers.get("retry-after"));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
      }

      it("counts across instances: past the client's limit, then past the address's limit → 429 with Retry-After, nothing stored", async () => {
        const a = first!;
        const b = second!;
        expect((await postPar(a, publicForm(clientIds.public))).status).toBe(201);
        expect((await postPar(b, publicForm(clientIds.public))).status).toBe(201);
        const before = await requestUriCount(a);
        expectLimited(await postPar(a, publicForm(clientIds.public)));
        expectLimited(await postPar(b, publicForm(clientIds.public)));
        expect(await requestUriCount(a)).toBe(before);
        // Another public client has its own count, but shares the address's: the third request from it fills it.
        expect((await postPar(b, publicForm(clientIds.otherPublic))).status).toBe(201);
        expectLimited(await postPar(a, publicForm(clientIds.otherPublic)));
        // Invalid requests count too (they are counted before validation), and refusals store nothing.
        expectLimited(await postPar(a, { client_id: clientIds.otherPublic }));
        // A refused request's DPoP proof is not used up either.
        const proof = await dpopProof(await dpopKey(), { htu: a.domain.oidc.endpoints.par });
        expectLimited(await postPar(a, publicForm(clientIds.otherPublic), { dpop: proof }));
        expect(await a.database.db.selectFrom("oidc_dpop_proof_jtis").select("jti_hash").execute()).toEqual([]);
        expect(await requestUriCount(a)).toBe(before + 1);
        // Confidential clients authenticate and are not limited by it.
        const confidential = await postPar(a, { ...request("basic"), redirect_uri: redirects.basic }, { authorization: basicAuthorization(clientIds.basic, clientSecrets.basic) });
        expect(confidential.status, confidential.text).toBe(201);
      });
    });
  });
}

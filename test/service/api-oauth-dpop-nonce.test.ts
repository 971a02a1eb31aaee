import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { CertificateStatus_Status as Status, Certificate_Type as CertificateType } from "../../gen/service/verify/v2/certificate_pb.ts";
import { dpopNonceSlotMs } from "../../src/app/compose-oidc.ts";
import { DpopNonces } from "../../src/domain/oidc/dpop/nonce.ts";
import { clientCredentialsToken, dpopAuthorization, registerApiClient } from "../support/api-oauth.ts";
import { bearer, clients, countStatuses, createTenant, protocols, setupClients } from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { dpopKey, dpopProof, type DpopKey } from "../support/dpop.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/*
 * Server DPoP nonces at the RPCs (RFC 9449 section 9), with
 * SHOMEI_DPOP_REQUIRE_NONCE: a proof without the current nonce is
 * unauthenticated with reason USE_DPOP_NONCE and the nonce in a DPoP-Nonce
 * header (a trailer in gRPC and gRPC-Web), over every protocol; the same
 * call with it passes; and the refusals of a token sent with the wrong
 * scheme carry the reason userinfo gives (invalid_token).
 */
const targets = await databaseTargets();
const noncePattern = /^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/;

/** The refusal of a call: its code, ErrorInfo reason, and the headers (and trailers) it came with. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; reason: string; nonce: string | null; challenge: string | null }> {
  const error = await call.then(
    () => expect.unreachable("expected the call to be refused"),
    (e: unknown) => ConnectError.from(e),
  );
  const [info] = error.findDetails(ErrorInfoSchema);
  return { code: Code[error.code], reason: info?.reason ?? "", nonce: error.metadata.get("dpop-nonce"), challenge: error.metadata.get("www-authenticate") };
}

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let h2: Http2SessionManager;

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, { dpopRequireNonce: true });
      h2 = new Http2SessionManager(server.url);
    }, 60_000);

    afterAll(async () => {
      h2?.abort();
      await server?.close();
      await scratch?.drop();
    });

    /** A new account with a certificate, and a DPoP-bound access token of its client. */
    async function boundToken(): Promise<{ accountId: string; certificateId: string; key: DpopKey; token: string }> {
      const tenant = await createTenant(server, `nonce-${randomUUID().slice(0, 8)}`);
      const created = await setupClients(server, tenant.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
      const key = await dpopKey();
      const token = await clientCredentialsToken(server, await registerApiClient(server, tenant.token, { dpopBoundAccessTokens: true }), { dpop: key });
      return { accountId: tenant.account.id, certificateId: created.certificate!.id, key, token };
    }

    for (const protocol of protocols) {
      it(`${protocol.name}: a proof without the nonce → unauthenticated USE_DPOP_NONCE with DPoP-Nonce; with it, the call passes`, async () => {
        const { certificateId, key, token } = await boundToken();
        const without = clients(protocol.transport(server.url, [dpopAuthorization(server, key, token)], h2));

        const refused = await refusal(without.certificates.checkCertificateStatus({ certificateId }));

        expect(refused).toMatchObject({ code: "Unauthenticated", reason: "ERROR_REASON_USE_DPOP_NONCE" });
        expect(refused.nonce).toMatch(noncePattern);
        expect(refused.challenge).toMatch(/^DPoP realm="shomei", error="use_dpop_nonce", error_description="[^"]+", algs="ES256 PS256 RS256 EdDSA"$/);
        const stale = clients(protocol.transport(server.url, [dpopAuthorization(server, key, token, { nonce: "0.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" })], h2));
        expect((await refusal(stale.certificates.checkCertificateStatus({ certificateId }))).reason).toBe("ERROR_REASON_USE_DPOP_NONCE");
        const withNonce = clients(protocol.transport(server.url, [dpopAuthorization(server, key, token, { nonce: refused.nonce! })], h2));
        const response = await withNonce.certificates.checkCertificateStatus({ certificateId });
        expect(Status[response.certificateStatus!.status]).toBe("GOOD");
      });
    }

    it("raw Connect JSON: 401, the challenge and the nonce in the answer's headers, no status written", async () => {
      const { accountId, certificateId, key, token } = await boundToken();
      const url = `${server.config.baseUrl}/service.verify.v2.CertificateService/CheckCertificateStatus`;
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `DPoP ${token}`, DPoP: await dpopProof(key, { htu: url, accessToken: token }) },
        body: JSON.stringify({ certificateId }),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("dpop-nonce")).toMatch(noncePattern);
      expect(response.headers.get("www-authenticate")).toMatch(/^DPoP realm="shomei", error="use_dpop_nonce"/);
      expect(await response.json()).toMatchObject({ code: "unauthenticated", message: "the DPoP proof must carry the nonce from the DPoP-Nonce header" });
      expect(await countStatuses(server, accountId)).toBe(0);
    });

    it("a proof with the nonce of the slot before passes, and the answer hands out the current one", async () => {
      const { certificateId, key, token } = await boundToken();
      const nonces = new DpopNonces(server.domain.oidc.secretKey, dpopNonceSlotMs);
      const now = Date.now();
      const previous = nonces.current(now - dpopNonceSlotMs);
      const url = `${server.config.baseUrl}/service.verify.v2.CertificateService/GetCertificate`;
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `DPoP ${token}`, DPoP: await dpopProof(key, { htu: url, accessToken: token, nonce: previous }) },
        body: JSON.stringify({ certificateId }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      const fresh = response.headers.get("dpop-nonce");
      expect(fresh).toMatch(noncePattern);
      expect(fresh).not.toBe(previous);
      expect(nonces.accepts(fresh!, Date.now())).toBe(true);
      // A proof with the current nonce gets no header: nothing is about to expire.
      const again = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `DPoP ${token}`, DPoP: await dpopProof(key, { htu: url, accessToken: token, nonce: fresh! }) },
        body: JSON.stringify({ certificateId }),
      });
      expect(again.status).toBe(200);
      expect(again.headers.get("dpop-nonce")).toBeNull();
    });

    it("a token sent with the wrong scheme is TOKEN_INVALID, with the challenge userinfo gives", async () => {
      const { certificateId, token } = await boundToken();
      const asBearer = clients(protocols[0]!.transport(server.url, [bearer(token)], h2));
      expect(await refusal(asBearer.certificates.checkCertificateStatus({ certificateId }))).toEqual({
        code: "Unauthenticated",
        reason: "ERROR_REASON_TOKEN_INVALID",
        nonce: null,
        challenge: 'DPoP realm="shomei", error="invalid_token", error_description="the access token is DPoP-bound: send it with the DPoP scheme and a proof", algs="ES256 PS256 RS256 EdDSA"',
      });
      const tenant = await createTenant(server, `bearer-${randomUUID().slice(0, 8)}`);
      const bearerToken = await clientCredentialsToken(server, await registerApiClient(server, tenant.token));
      const asDpop = clients(protocols[0]!.transport(server.url, [dpopAuthorization(server, await dpopKey(), bearerToken)], h2));
      expect(await refusal(asDpop.certificates.checkCertificateStatus({ certificateId }))).toEqual({
        code: "Unauthenticated",
        reason: "ERROR_REASON_TOKEN_INVALID",
        nonce: null,
        challenge: 'Bearer realm="shomei", error="invalid_token", error_description="the access token is not DPoP-bound: send it with the Bearer scheme"',
      });
    });
  });
}

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateService } from "../../gen/service/verify/v2/certificate_service_pb.ts";
import { Certificate_Type as CertificateType } from "../../gen/service/verify/v2/certificate_pb.ts";
import { HashAlgorithm, VerificationService } from "../../gen/service/verify/v2/verification_service_pb.ts";
import { bearer, createTenant, protocols, setupClients, stackTracePattern, type Tenant } from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { challengeOf, derOf, mockCard } from "../support/jpki.ts";
import { authorizeUrl, Browser, createUser, csrfOf, expectPage, registerClient, signIn, type Reply } from "../support/oidc.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Every byte of a real mock certificate changed, one at a time, and sent
 * where outside certificates come in: Verify and CheckCertificateStatusByContent
 * (the protocols in turn) and the three pages that take a pasted certificate.
 * A damaged certificate is bad input: a 4xx or a clean RPC error, never a
 * 5xx, `internal` or `unknown`, and never a stack trace in the log.
 */
const redirectUri = "https://damaged.example/cb";
const concurrency = 8;

function mutations(der: Uint8Array): Uint8Array[] {
  return Array.from(der, (byte, index) => {
    const copy = der.slice();
    copy[index] = byte ^ 0x80;
    return copy;
  });
}

const pem = (der: Uint8Array) => `-----BEGIN CERTIFICATE-----\n${Buffer.from(der).toString("base64")}\n-----END CERTIFICATE-----\n`;

async function inTurn<T>(items: readonly T[], work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index]!, index);
    }
  }));
}

for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`damaged certificates on ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let dataDir: string;
    let server: TestServer;
    let h2: Http2SessionManager;
    let tenant: Tenant;
    let variants: Uint8Array[];

    beforeAll(async () => {
      scratch = await target.create();
      dataDir = mkdtempSync(path.join(tmpdir(), "shomei-damaged-"));
      server = await startTestServer(scratch.url, { dataDir });
      h2 = new Http2SessionManager(server.url);
      tenant = await createTenant(server, "damaged");
      const created = await setupClients(server, tenant.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
      variants = mutations(new Uint8Array(Buffer.from(created.certificatePem.replace(/-----[^-]+-----|\s/g, ""), "base64")));
    });

    afterAll(async () => {
      h2?.abort();
      await server?.close();
      await scratch?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    function expectNoStackInLogs(): void {
      const failures = server.logs.filter((line) => line.level === "error" || line.level === "fatal" || (line.err as { stack?: string } | undefined)?.stack);
      expect(failures.map((line) => `${String(line.msg)}: ${String((line.err as { message?: string } | undefined)?.message)}`)).toEqual([]);
    }

    it("Verify and CheckCertificateStatusByContent answer every variant with a client error, over every protocol", async () => {
      const apis = protocols.map((protocol) => {
        const transport = protocol.transport(server.url, [bearer(tenant.token)], h2);
        return { name: protocol.name, certificates: createClient(CertificateService, transport), verifications: createClient(VerificationService, transport) };
      });
      const digest = createHash("sha256").update("document").digest();
      const codes = new Map<string, number>();
      await inTurn(variants, async (certificate, index) => {
        const api = apis[index % apis.length]!;
        for (const call of [
          () => api.verifications.verify({ certificate, hashAlgorithm: HashAlgorithm.SHA256, digest, signature: new Uint8Array(256) }),
          () => api.certificates.checkCertificateStatusByContent({ certificate }),
        ]) {
          const code = await call().then(
            () => "answered",
            (error: unknown) => {
              const connect = ConnectError.from(error);
              expect(connect.rawMessage, `${api.name}, byte ${index}`).not.toMatch(stackTracePattern);
              return Code[connect.code];
            },
          );
          codes.set(code, (codes.get(code) ?? 0) + 1);
        }
      });
      expect([...codes.keys()].filter((code) => code === "Internal" || code === "Unknown" || code === "Unavailable"), JSON.stringify([...codes])).toEqual([]);
      expect(codes.get("InvalidArgument")).toBeGreaterThan(0);
      const warnings = server.logs.filter((line) => line.level === "warn").map((line) => line.msg);
      expect(warnings).toContain("damaged input refused");
      expect(server.logs.filter((line) => line.msg === "damaged input refused" && "err" in line)).toEqual([]);
      expectNoStackInLogs();
    }, 120_000);

    it("the card sign-in, card step-up and certificate linking pages refuse every variant with a page, not a 5xx", async () => {
      await registerClient(server, { client_id: "damaged-app", client_secret: "damaged-app-secret-0123456789", redirect_uris: [redirectUri], scope: "openid" });
      const user = await createUser(server);
      // A linked card makes the card step-up page the one a very_high request leads to.
      await server.domain.oidc.jpki.linkByOperator(user.row.id, derOf(await mockCard(server, tenant.account.id)));
      const params = (extra: Record<string, string>) => ({ client_id: "damaged-app", redirect_uri: redirectUri, response_type: "code", scope: "openid", state: "s", ...extra });

      const cardSignIn = async () => {
        const b = new Browser(server.url);
        const login = expectPage(await b.get(authorizeUrl(params({}))), "login");
        return { b, path: login.replace("/auth/login?", "/auth/login/jpki?"), fields: {} };
      };
      const cardStepUp = async () => {
        const b = new Browser(server.url);
        const reauth = expectPage(await signIn(b, await b.get(authorizeUrl(params({ acr_values: "very_high", max_age: "0" }))), user.login, user.password), "reauth");
        return { b, path: reauth, fields: { method: "jpki" } };
      };
      const linking = async () => {
        const b = new Browser(server.url);
        await signIn(b, await b.get(authorizeUrl(params({}))), user.login, user.password);
        return { b, path: "/account/jpki", fields: {} };
      };

      const statuses = new Map<number, number>();
      await Promise.all([cardSignIn, cardStepUp, linking].map(async (open) => {
        const { b, path: pagePath, fields } = await open();
        let page: Reply = await b.get(pagePath);
        expect(page.status, page.body).toBe(200);
        for (const [index, certificate] of variants.entries()) {
          const reply = await b.post(pagePath, { csrf: csrfOf(page.body), challenge: challengeOf(page.body), certificate: pem(certificate), signature: Buffer.alloc(256).toString("base64"), ...fields });
          statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
          expect(reply.status, `${pagePath}, byte ${index}: ${reply.body.slice(0, 300)}`).toBeLessThan(500);
          expect(reply.body).not.toMatch(stackTracePattern);
          page = reply.location ? await b.get(reply.location) : reply;
        }
      }));
      expect(statuses.get(400), JSON.stringify([...statuses])).toBeGreaterThan(0);
      expectNoStackInLogs();
    }, 180_000);
  });
}

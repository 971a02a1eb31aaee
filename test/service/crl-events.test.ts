import { createHash, sign, X509Certificate } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CertificateStatus_CheckMethod as CheckMethod, CertificateStatus_Status as Status, CrlReason } from "../../gen/service/verify/v2/certificate_pb.ts";
import { EventService, type Event } from "../../gen/service/verify/v2/event_service_pb.ts";
import { HashAlgorithm, VerificationService } from "../../gen/service/verify/v2/verification_service_pb.ts";
import type { CrlIssuer } from "../../src/domain/certificates/crl/crl-lists.ts";
import { bearer, createTenant, setupClients, type Clients } from "../support/certificate-rpc.ts";
import { CrlHttpServer } from "../support/crl-http-server.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { OcspProxy } from "../support/ocsp-proxy.ts";
import { OpensslCrlCa, type IssuedLeaf } from "../support/openssl-crl-ca.ts";
import { OpensslOcspResponder, responderCertificate } from "../support/openssl-ocsp.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Events from the lists themselves, in production mode on each database: a
 * CA run with `openssl ca`, its lists served on loopback and installed with a
 * refresh (no check in between). A new list's added and removed serials
 * record one event per account that registered the certificate, and none
 * for anyone else; an OCSP answer that differs from the last known status
 * records one when a check or a verification sees it.
 */
const policy = "1.2.392.200149.8.5.1.1.20";

function anchorId(ca: OpensslCrlCa): string {
  return `sha256:${new X509Certificate(ca.der).fingerprint256.replace(/:/g, "").toLowerCase()}`;
}

/** Releases a hold in `openssl ca`'s database: the certificate's line is valid again, so the next list drops it. */
function releaseHold(ca: OpensslCrlCa, leaf: IssuedLeaf): void {
  const lines = readFileSync(ca.indexPath, "utf8").split("\n");
  const released = lines.map((line) => {
    const fields = line.split("\t");
    if (fields[0] !== "R" || fields[3]?.toLowerCase().replace(/^(00)+/, "") !== leaf.serialHex) return line;
    return ["V", fields[1], "", ...fields.slice(3)].join("\t");
  });
  writeFileSync(ca.indexPath, released.join("\n"));
}

interface Account {
  token: string;
  api: Clients;
  events: Client<typeof EventService>;
}

for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`events from CRLs and OCSP on ${targetTitle(target)}`, () => {
    let dir: string;
    let scratch: ScratchDatabase;
    let http: CrlHttpServer;
    let ca: OpensslCrlCa;
    let ocspCa: OpensslCrlCa;
    let responder: OpensslOcspResponder;
    let proxy: OcspProxy;
    let server: TestServer;
    let a: Account;
    let b: Account;
    let c: Account;
    const url = () => http.url("/events.crl");
    const issuer = (): CrlIssuer => server.domain.crlLists.issuer(anchorId(ca))!;

    const binaryTransport = (token: string) => createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", useBinaryFormat: true, interceptors: [bearer(token)] });

    async function account(name: string): Promise<Account> {
      const tenant = await createTenant(server, name);
      return { token: tenant.token, api: setupClients(server, tenant.token), events: createClient(EventService, binaryTransport(tenant.token)) };
    }

    /** Registers the certificate to the account, with a first check (GOOD); its id there. */
    async function register(owner: Account, leaf: IssuedLeaf): Promise<string> {
      const { certificate, certificateStatus } = await owner.api.certificates.checkCertificateStatusByContent({ certificate: leaf.der });
      expect(certificateStatus?.status).toBe(Status.GOOD);
      return certificate!.id;
    }

    async function eventsOf(owner: Account): Promise<Event[]> {
      return (await owner.events.listEvents({ pageSize: 100 })).events;
    }

    /** The responder answers from openssl's database as it was when it started. */
    async function restartResponder(): Promise<void> {
      await responder.stop();
      await responder.start();
      proxy.upstream = responder.url;
    }

    /** The CA's list as it is now, served and installed: what a scheduled refresh does. */
    async function newList(): Promise<number> {
      const list = ca.gencrl();
      http.publish("/events.crl", list.der);
      expect((await server.domain.crlLists.refresh(issuer(), url())).outcome).toBe("fetched");
      return list.thisUpdate;
    }

    beforeAll(async () => {
      dir = mkdtempSync(path.join(tmpdir(), "shomei-crl-events-"));
      for (const name of ["ca", "ocsp-ca"]) mkdirSync(path.join(dir, name));
      http = new CrlHttpServer();
      await http.start();
      ca = new OpensslCrlCa(path.join(dir, "ca"), "events CRL CA");
      ocspCa = new OpensslCrlCa(path.join(dir, "ocsp-ca"), "events OCSP CA");
      responder = new OpensslOcspResponder(ocspCa, responderCertificate(dir, "responder", ocspCa), { nextUpdateMinutes: 60 });
      await responder.start();
      proxy = new OcspProxy(responder.url);
      await proxy.start();
      http.publish("/events.crl", ca.gencrl().der);
      const issues = [{ type: "jpki_card_digital_signature", policyOid: policy, keyUsage: ["digitalSignature", "nonRepudiation"] }];
      writeFileSync(
        path.join(dir, "anchors.json"),
        JSON.stringify({
          anchors: [
            { name: "events CRL CA", certificates: "ca/ca.pem", issues },
            // Its certificates name no distribution point: only OCSP answers for them, and only when asked.
            { name: "events OCSP CA", certificates: "ocsp-ca/ca.pem", issues, ocspUrls: [proxy.url] },
          ],
        }),
      );
      scratch = await target.create();
      server = await startTestServer(scratch.url, {
        mode: "production",
        trustAnchorsFile: path.join(dir, "anchors.json"),
        secretKeyFile: path.join(dir, "shared.key"),
        crlFetchTimeoutMs: 1000,
        ocspTimeoutMs: 1000,
      });
    });

    // Accounts of their own for each test: a test counts the events of its accounts, in whatever order tests run.
    let accounts = 0;
    beforeEach(async () => {
      accounts += 1;
      a = await account(`crl-events-a-${accounts}`);
      b = await account(`crl-events-b-${accounts}`);
      c = await account(`crl-events-c-${accounts}`);
    });

    afterAll(async () => {
      await server?.close();
      await proxy?.close();
      await responder?.stop();
      await http?.close();
      await scratch?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("a new list's revocations are one event per account that registered the certificate, and none for anyone else; the same list again, none", async () => {
      const shared = ca.issue("shared", url());
      const onlyA = ca.issue("only-a", url());
      const ofC = ca.issue("of-c", url());
      const unregistered = ca.issue("unregistered", url());
      const sharedInA = await register(a, shared);
      const sharedInB = await register(b, shared);
      const onlyInA = await register(a, onlyA);
      await register(c, ofC);

      const revokedAt = ca.revoke(shared, "keyCompromise");
      ca.revoke(onlyA, "affiliationChanged");
      ca.revoke(unregistered, "keyCompromise");
      const thisUpdate = await newList();

      const ofA = await eventsOf(a);
      expect(ofA.map((e) => [e.subject, e.type, e.data!.previousStatus, e.data!.status, e.data!.revokedReason]).sort()).toEqual(
        [
          [sharedInA, "certificate.revoked", Status.GOOD, Status.REVOKED, CrlReason.KEY_COMPROMISE],
          [onlyInA, "certificate.revoked", Status.GOOD, Status.REVOKED, CrlReason.AFFILIATION_CHANGED],
        ].sort(),
      );
      const [ofB, ...moreOfB] = await eventsOf(b);
      expect(moreOfB).toEqual([]);
      expect({ subject: ofB!.subject, type: ofB!.type, method: ofB!.data!.checkMethod }).toEqual({ subject: sharedInB, type: "certificate.revoked", method: CheckMethod.CRL });
      expect(timestampMs(ofB!.data!.revokedAt!)).toBe(revokedAt);
      expect(timestampMs(ofB!.data!.sourceUpdatedAt!)).toBe(thisUpdate);
      expect(await eventsOf(c)).toEqual([]);

      // The event is a status record of the account: a check now finds it and records nothing more.
      expect((await b.api.certificates.getCertificateStatus({ certificateStatusId: ofB!.id })).certificateStatus?.status).toBe(Status.REVOKED);
      const checked = await b.api.certificates.checkCertificateStatus({ certificateId: sharedInB });
      expect(checked.certificateStatus?.status).toBe(Status.REVOKED);
      expect(await eventsOf(b)).toHaveLength(1);

      // The same entries in a newer list: no change, no event.
      await newList();
      expect((await eventsOf(a)).length + (await eventsOf(b)).length + (await eventsOf(c)).length).toBe(3);
    });

    it("a hold released is certificate.reinstated, and a hold placed certificate.revoked", async () => {
      const held = ca.issue("held", url());
      const heldInC = await register(c, held);
      ca.revoke(held, "certificateHold");
      await newList();
      releaseHold(ca, held);
      await newList();
      expect((await c.events.listEvents({ certificateId: heldInC })).events.map((e) => [e.type, e.data!.previousStatus, e.data!.status, e.data!.revokedReason])).toEqual([
        ["certificate.reinstated", Status.REVOKED, Status.GOOD, CrlReason.UNSPECIFIED],
        ["certificate.revoked", Status.GOOD, Status.REVOKED, CrlReason.CERTIFICATE_HOLD],
      ]);
    });

    it("a list that names only serials nobody registered records nothing", async () => {
      const before = (await eventsOf(a)).length + (await eventsOf(b)).length + (await eventsOf(c)).length;
      for (let i = 0; i < 3; i++) ca.revoke(ca.issue(`stranger-${i}`, url()), "superseded");
      await newList();
      expect((await eventsOf(a)).length + (await eventsOf(b)).length + (await eventsOf(c)).length).toBe(before);
    });

    it("an OCSP answer that differs from the last known status records an event, through a check or a verification", async () => {
      const checked = ocspCa.issue("ocsp-checked", "", policy, proxy.url);
      const verified = ocspCa.issue("ocsp-verified", "", policy, proxy.url, undefined, "rsa2048");
      await restartResponder();
      const checkedId = await register(a, checked);
      const digest = createHash("sha256").update("contract").digest();
      const verify = () =>
        createClient(VerificationService, binaryTransport(a.token)).verify({
          certificate: verified.der,
          hashAlgorithm: HashAlgorithm.SHA256,
          digest,
          signature: sign("sha256", Buffer.from("contract"), readFileSync(verified.keyPath)),
        });
      const first = await verify();
      expect(first.certificateStatus?.status).toBe(Status.GOOD);

      ocspCa.revoke(checked, "keyCompromise");
      ocspCa.revoke(verified, "affiliationChanged");
      await restartResponder();
      // The answers held have lapsed (as at their nextUpdate): the next check asks the responder again.
      for (const leaf of [checked, verified]) await server.domain.ocspResponses.forget({ issuerAnchor: anchorId(ocspCa), serialNumber: leaf.serialHex });
      expect(await a.events.listEvents({ certificateId: checkedId })).toMatchObject({ events: [] });

      const revoked = (await a.api.certificates.checkCertificateStatus({ certificateId: checkedId })).certificateStatus!;
      expect({ status: revoked.status, method: revoked.checkMethod }).toEqual({ status: Status.REVOKED, method: CheckMethod.OCSP });
      const [event] = (await a.events.listEvents({ certificateId: checkedId })).events;
      expect({ id: event?.id, type: event?.type, method: event?.data?.checkMethod }).toEqual({ id: revoked.id, type: "certificate.revoked", method: CheckMethod.OCSP });

      const second = await verify();
      expect(second.certificateStatus?.status).toBe(Status.REVOKED);
      const [verifiedEvent] = (await a.events.listEvents({ certificateId: second.certificate!.id })).events;
      expect({ id: verifiedEvent?.id, type: verifiedEvent?.type }).toEqual({ id: second.certificateStatus!.id, type: "certificate.revoked" });
    });
  });
}

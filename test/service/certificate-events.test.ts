import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type Client } from "@connectrpc/connect";
import { Http2SessionManager } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CertificateStatus_CheckMethod as CheckMethod,
  CertificateStatus_Status as Status,
  Certificate_Type as CertificateType,
  CrlReason,
} from "../../gen/service/verify/v2/certificate_pb.ts";
import { EventService, type Event } from "../../gen/service/verify/v2/event_service_pb.ts";
import { bearer, createTenant, expectRpcError, protocols, setupClients, uuidPattern, type Clients, type Tenant } from "../support/certificate-rpc.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Certificate events (EventService) through real requests on each database:
 * a status record that differs from the certificate's previous one records
 * exactly one event of the right type, whoever wrote it (a new CRL's
 * changes, as SetMockCertificateStatus re-issues the mock CA's list; a check,
 * a batch, a verification); the same status records none; an account sees only its
 * own; WatchEvents streams them over every protocol and resumes after an id.
 */

for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`certificate events on ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let server: TestServer;
    let h2: Http2SessionManager;
    let a: Tenant;
    let b: Tenant;
    let setupA: Clients;
    let eventsA: Client<typeof EventService>;
    let eventsB: Client<typeof EventService>;

    beforeAll(async () => {
      scratch = await target.create();
      server = await startTestServer(scratch.url, { eventsHeartbeatSeconds: 1 });
      h2 = new Http2SessionManager(server.url);
      a = await createTenant(server, "events-a");
      b = await createTenant(server, "events-b");
      setupA = setupClients(server, a.token);
      eventsA = createClient(EventService, protocols[0]!.transport(server.url, [bearer(a.token)], h2));
      eventsB = createClient(EventService, protocols[0]!.transport(server.url, [bearer(b.token)], h2));
    });

    afterAll(async () => {
      h2?.abort();
      await server?.close();
      await scratch?.drop();
    });

    async function mockCertificate() {
      return setupA.mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    }

    async function setStatus(certificateId: string, status: Status, revokedReason?: CrlReason) {
      await setupA.mock.setMockCertificateStatus({ certificateId, status, ...(revokedReason === undefined ? {} : { revokedReason }) });
    }

    async function check(certificateId: string) {
      return (await setupA.certificates.checkCertificateStatus({ certificateId })).certificateStatus!;
    }

    async function eventsOf(certificateId: string): Promise<Event[]> {
      return (await eventsA.listEvents({ certificateId, pageSize: 100 })).events;
    }

    /** An event of A's own, for a test that needs one to exist: a checked certificate revoked. */
    async function revocationEvent(): Promise<void> {
      const id = (await mockCertificate()).certificate!.id;
      await check(id);
      await setStatus(id, Status.REVOKED, CrlReason.KEY_COMPROMISE);
      expect(await eventsOf(id)).toHaveLength(1);
    }

    it("SetMockCertificateStatus records the change at once, through the re-issued CRL: one certificate.revoked event, with its status record's id", async () => {
      const created = await mockCertificate();
      const id = created.certificate!.id;
      expect((await check(id)).status).toBe(Status.GOOD);
      expect(await check(id)).toMatchObject({ status: Status.GOOD });
      expect(await eventsOf(id)).toEqual([]);

      // No check between: the new list's diff found the serial and recorded the change.
      await setStatus(id, Status.REVOKED, CrlReason.KEY_COMPROMISE);
      const [event, ...others] = await eventsOf(id);
      expect(others).toEqual([]);
      const record = (await setupA.certificates.getCertificateStatus({ certificateStatusId: event!.id })).certificateStatus!;
      expect({ status: record.status, method: record.checkMethod }).toEqual({ status: Status.REVOKED, method: CheckMethod.CRL });
      expect({ type: event!.type, subject: event!.subject, source: event!.source }).toEqual({
        type: "certificate.revoked",
        subject: id,
        source: `${server.domain.oidc.issuer}/accounts/${a.account.id}`,
      });
      expect(timestampMs(event!.time!)).toBe(timestampMs(record.createdAt!));
      const data = event!.data!;
      expect({
        certificateId: data.certificateId,
        userId: data.userId,
        certificateType: data.certificateType,
        status: data.status,
        previousStatus: data.previousStatus,
        revokedReason: data.revokedReason,
        checkMethod: data.checkMethod,
      }).toEqual({
        certificateId: id,
        userId: created.user!.id,
        certificateType: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE,
        status: Status.REVOKED,
        previousStatus: Status.GOOD,
        revokedReason: CrlReason.KEY_COMPROMISE,
        checkMethod: CheckMethod.CRL,
      });
      expect(timestampMs(data.revokedAt!)).toBe(timestampMs(record.revokedAt!));
      expect(timestampMs(data.sourceUpdatedAt!)).toBe(timestampMs(record.sourceUpdatedAt!));

      // A check now finds the status the list recorded: revoked, as of the same list, and no new event.
      const checked = await check(id);
      expect({ status: checked.status, sourceUpdatedAt: timestampMs(checked.sourceUpdatedAt!) }).toEqual({ status: Status.REVOKED, sourceUpdatedAt: timestampMs(record.sourceUpdatedAt!) });
      expect(await eventsOf(id)).toHaveLength(1);
      expect((await eventsA.getEvent({ eventId: event!.id })).event).toEqual(event);
    });

    it("a certificate never checked gets its event too: the previous list's answer is its first status record", async () => {
      const id = (await mockCertificate()).certificate!.id;
      await check((await mockCertificate()).certificate!.id); // the mock CA's list is held
      await setStatus(id, Status.REVOKED, CrlReason.KEY_COMPROMISE);
      expect((await eventsOf(id)).map((e) => [e.type, e.data!.previousStatus, e.data!.status])).toEqual([["certificate.revoked", Status.GOOD, Status.REVOKED]]);
      const history = (await setupA.certificates.listCertificateStatuses({ certificateId: id })).certificateStatuses;
      expect(history.map((r) => r.status)).toEqual([Status.REVOKED, Status.GOOD]);
    });

    it("a hold released is certificate.reinstated; good after another revocation is certificate.status_changed", async () => {
      const held = (await mockCertificate()).certificate!.id;
      await check(held);
      await setStatus(held, Status.REVOKED, CrlReason.CERTIFICATE_HOLD);
      await check(held);
      await setStatus(held, Status.GOOD);
      await check(held);
      expect((await eventsOf(held)).map((e) => [e.type, e.data!.previousStatus, e.data!.status])).toEqual([
        ["certificate.reinstated", Status.REVOKED, Status.GOOD],
        ["certificate.revoked", Status.GOOD, Status.REVOKED],
      ]);

      const other = (await mockCertificate()).certificate!.id;
      await check(other);
      await setStatus(other, Status.REVOKED, CrlReason.SUPERSEDED);
      await check(other);
      await setStatus(other, Status.GOOD);
      await check(other);
      expect((await eventsOf(other)).map((e) => e.type)).toEqual(["certificate.status_changed", "certificate.revoked"]);
    });

    it("a batch records the change its check sees (one only OCSP reports)", async () => {
      const batched = (await mockCertificate()).certificate!.id;
      await setupA.certificates.batchCheckCertificateStatus({ certificateIds: [batched] });
      // Unknown is a change only OCSP reports (the mock CA's list does not cover such a certificate): the check records it.
      await setStatus(batched, Status.UNKNOWN);
      expect(await eventsOf(batched)).toEqual([]);
      await setupA.certificates.batchCheckCertificateStatus({ certificateIds: [batched, batched] });
      // The first item of the batch records the change; the second sees unknown after unknown.
      expect((await eventsOf(batched)).map((e) => [e.type, e.data!.checkMethod])).toEqual([["certificate.status_changed", CheckMethod.OCSP]]);
      // Verifications record theirs through the same trigger: see crl-events.test.ts (an issuer with OCSP only).
    });

    it("revoked, then set to unknown: the re-issued list records nothing, and the check records revoked → unknown, never good between", async () => {
      const id = (await mockCertificate()).certificate!.id;
      await check(id);
      await setStatus(id, Status.REVOKED, CrlReason.KEY_COMPROMISE);
      expect((await check(id)).status).toBe(Status.REVOKED);
      // The list drops the serial, but it does not cover a certificate set to STATUS_UNKNOWN: no change of its own.
      await setStatus(id, Status.UNKNOWN);
      expect((await eventsOf(id)).map((e) => e.type)).toEqual(["certificate.revoked"]);
      expect(await check(id)).toMatchObject({ status: Status.UNKNOWN, checkMethod: CheckMethod.OCSP });
      expect((await eventsOf(id)).map((e) => [e.type, e.data!.previousStatus, e.data!.status, e.data!.checkMethod])).toEqual([
        ["certificate.status_changed", Status.REVOKED, Status.UNKNOWN, CheckMethod.OCSP],
        ["certificate.revoked", Status.GOOD, Status.REVOKED, CheckMethod.CRL],
      ]);
      const history = (await setupA.certificates.listCertificateStatuses({ certificateId: id })).certificateStatuses;
      expect(history.slice(0, 2).map((r) => r.status)).toEqual([Status.UNKNOWN, Status.REVOKED]);
    });

    it("lists newest first, a page at a time, by certificate and by type; refuses a bad filter or token", async () => {
      const ids = [];
      for (let i = 0; i < 3; i++) {
        const id = (await mockCertificate()).certificate!.id;
        await check(id);
        await setStatus(id, Status.REVOKED, CrlReason.KEY_COMPROMISE);
        ids.push((await eventsOf(id))[0]!.id);
      }
      const first = await eventsA.listEvents({ pageSize: 2, type: "certificate.revoked" });
      expect(first.events.map((e) => e.id)).toEqual([ids[2], ids[1]]);
      const second = await eventsA.listEvents({ pageSize: 2, type: "certificate.revoked", pageToken: first.nextPageToken });
      expect(second.events[0]!.id).toBe(ids[0]);
      expect(second.events.every((e) => e.type === "certificate.revoked")).toBe(true);
      await expectRpcError(eventsA.listEvents({ type: "certificate.deleted" }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "type");
      await expectRpcError(eventsA.listEvents({ pageSize: 101 }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "page_size");
      await expectRpcError(eventsA.listEvents({ pageToken: first.nextPageToken }), Code.InvalidArgument, "ERROR_REASON_INVALID_PAGE_TOKEN", "page_token");
      await expectRpcError(eventsA.listEvents({ certificateId: "not-a-uuid" }), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "certificate_id");
    });

    it("another account sees none of them: an event of A is not found for B, and B's list and watch are empty", async () => {
      await revocationEvent();
      const [event] = (await eventsA.listEvents({ pageSize: 1 })).events;
      expect(event).toBeDefined();
      await expectRpcError(eventsB.getEvent({ eventId: event!.id }), Code.NotFound, "ERROR_REASON_EVENT_NOT_FOUND");
      await expectRpcError(eventsA.getEvent({ eventId: "00000000-0000-4000-8000-000000000000" }), Code.NotFound, "ERROR_REASON_EVENT_NOT_FOUND");
      expect((await eventsB.listEvents({})).events).toEqual([]);
      const stream = eventsB.watchEvents({}, { signal: AbortSignal.timeout(1500) });
      const seen: string[] = [];
      await expect(
        (async () => {
          for await (const message of stream) seen.push(message.kind.case ?? "");
        })(),
      ).rejects.toThrow();
      expect(seen.filter((kind) => kind === "event")).toEqual([]);
      const watchStart = (client: Client<typeof EventService>, afterEventId: string) =>
        (async () => {
          for await (const message of client.watchEvents({ afterEventId })) void message;
        })();
      await expectRpcError(watchStart(eventsB, event!.id), Code.NotFound, "ERROR_REASON_EVENT_NOT_FOUND");
      await expectRpcError(watchStart(eventsA, "not-a-uuid"), Code.InvalidArgument, "ERROR_REASON_INVALID_FIELD", "after_event_id");
      const anonymous = createClient(EventService, protocols[3]!.transport(server.url, [], h2));
      await expectRpcError(watchStart(anonymous, ""), Code.Unauthenticated, "ERROR_REASON_TOKEN_MISSING");
    });

    for (const protocol of protocols) {
      it(`WatchEvents over ${protocol.name}: the events after an id, then new ones as they happen, heartbeats between`, async () => {
        const watcher = createClient(EventService, protocol.transport(server.url, [bearer(a.token)], h2));
        await revocationEvent();
        const [latest] = (await eventsA.listEvents({ pageSize: 1 })).events;
        const id = (await mockCertificate()).certificate!.id;
        await check(id);

        const controller = new AbortController();
        const received: Event[] = [];
        let heartbeats = 0;
        const watching = (async () => {
          try {
            for await (const message of watcher.watchEvents({ afterEventId: latest!.id }, { signal: controller.signal })) {
              if (message.kind.case === "event") received.push(message.kind.value);
              if (message.kind.case === "heartbeat") heartbeats++;
              if (received.length === 2) controller.abort();
            }
          } catch (error) {
            if (!controller.signal.aborted) throw error;
          }
        })();
        await setStatus(id, Status.REVOKED, CrlReason.KEY_COMPROMISE);
        const revoked = (await eventsOf(id))[0]!;
        await setStatus(id, Status.GOOD);
        const good = (await eventsOf(id))[0]!;
        await Promise.race([watching, new Promise((_, reject) => setTimeout(() => reject(new Error(`received ${received.length} events`)), 15_000))]);
        expect(received.map((e) => e.id)).toEqual([revoked.id, good.id]);
        expect(received.every((e) => e.id.match(uuidPattern))).toBe(true);

        // Resuming after the first gives the second and nothing before it.
        const again: string[] = [];
        for await (const message of watcher.watchEvents({ afterEventId: revoked.id })) {
          if (message.kind.case === "event") again.push(message.kind.value.id);
          if (message.kind.case === "heartbeat") {
            heartbeats++;
            break;
          }
        }
        expect(again).toEqual([good.id]);
        expect(heartbeats).toBeGreaterThan(0);
      }, 30_000);
    }
  });
}

import { randomBytes } from "node:crypto";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogoutDeliveryLoop } from "../../src/domain/oidc/backchannel-logout/delivery-loop.ts";
import type { ClaimedLogout } from "../../src/domain/oidc/backchannel-logout/model.ts";
import { registrationFromMetadata } from "../../src/domain/oidc/client-registration.ts";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { SigningKeys } from "../../src/domain/oidc/keys/signing-keys.ts";
import type { WebhookRequest, WebhookResponse, WebhookSender } from "../../src/domain/webhooks/model.ts";
import { ClientsRepository } from "../../src/storage/clients-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { LogoutOutboxRepository } from "../../src/storage/logout-outbox-repository.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OidcRepository } from "../../src/storage/oidc-repository.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { InMemorySigningKeys } from "../support/in-memory/index.ts";

/**
 * The outbox of logout tokens over each database: ending a session queues
 * one delivery per listening client, once however many end it at the same
 * time; a claim holds until its lease lapses and only its holder records an
 * outcome; the loop retries on the schedule with the same jti, then gives up.
 */
const minute = 60_000;

/** A sender that answers as the test says and records what it was given. */
class ScriptedSender implements WebhookSender {
  readonly sent: WebhookRequest[] = [];
  answer: () => WebhookResponse = () => ({ statusCode: 200, excerpt: "", durationMs: 1 });
  async send(request: WebhookRequest): Promise<WebhookResponse> {
    this.sent.push(request);
    return this.answer();
  }
}

for (const target of await databaseTargets()) {
  describe.skipIf(target.unavailable !== undefined)(`the logout outbox on ${targetTitle(target)}`, () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let outbox: LogoutOutboxRepository;
    let oidc: OidcRepository;
    let clients: ClientsRepository;
    let now: number;
    const keys = new SigningKeys(new InMemorySigningKeys(), randomBytes(32), () => Date.now());

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      outbox = new LogoutOutboxRepository(database);
      oidc = new OidcRepository(database);
      clients = new ClientsRepository(database);
      now = Date.UTC(2026, 0, 1);
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    /** A client (listening or not), a user and a session in which the client was issued a code; the session's id hash and sid. */
    async function sessionWithClient(listens = true): Promise<{ idHash: string; sid: string; clientId: string; userId: string }> {
      const suffix = randomBytes(5).toString("hex");
      const clientId = `rp-${suffix}`;
      const metadata = { client_id: clientId, client_secret: "a client secret of 32 characters", redirect_uris: ["https://rp.example/cb"] };
      const { client } = registrationFromMetadata(listens ? { ...metadata, backchannel_logout_uri: `https://${clientId}.example/bcl` } : metadata, now);
      await clients.save(client, now);
      const userId = crypto.randomUUID();
      await oidc.insertUser({ id: userId, login: `u-${suffix}`, passwordHash: "x", totpSecretSealed: null, totpLastStep: null, name: null, localizedNames: [], email: null, createdAt: now });
      const idHash = sha256Hex(randomBytes(16).toString("hex"));
      await oidc.insertSession({ idHash, userId, authTime: now, acr: "low", amr: ["pwd"], createdAt: now, expiresAt: now + 3600_000 });
      const sid = `sid-${suffix}`;
      await oidc.recordSessionClient({ sessionIdHash: idHash, clientId, sid, userId, createdAt: now });
      await oidc.recordSessionClient({ sessionIdHash: idHash, clientId, sid, userId, createdAt: now + 1 });
      return { idHash, sid, clientId, userId };
    }

    function rowsFor(clientId: string) {
      return database.db.selectFrom("oidc_logout_deliveries").selectAll().where("client_id", "=", clientId).execute();
    }

    async function claimOf(clientId: string, at: number, leaseMs = minute): Promise<ClaimedLogout | undefined> {
      return (await outbox.claimDue(at, leaseMs, 100)).find((d) => d.clientId === clientId);
    }

    it("a session ended twice at once queues its client's token once; a client that stopped listening gets none", async () => {
      const session = await sessionWithClient();
      const quiet = await sessionWithClient(false);
      const ends = await Promise.all([outbox.endSessions({ idHash: session.idHash }, now), outbox.endSessions({ idHash: session.idHash }, now)]);
      expect(ends.map((e) => e.sessions).sort()).toEqual([0, 1]);
      expect(ends.map((e) => e.deliveries).sort()).toEqual([0, 1]);
      expect(await rowsFor(session.clientId)).toMatchObject([{ sid: session.sid, user_id: session.userId, state: "pending", attempts: 0 }]);
      expect(await outbox.endSessions({ idHash: quiet.idHash }, now)).toEqual({ sessions: 1, deliveries: 0 });
      expect(await rowsFor(quiet.clientId)).toEqual([]);
    });

    it("a claim holds until its lease lapses, and only the holder of the lease records the outcome", async () => {
      const session = await sessionWithClient();
      await outbox.endSessions({ userId: session.userId }, now);
      const first = (await claimOf(session.clientId, now))!;
      expect(first).toMatchObject({ clientId: session.clientId, sid: session.sid, attempts: 0 });
      expect(await claimOf(session.clientId, now + minute - 1)).toBeUndefined();
      const second = (await claimOf(session.clientId, now + minute))!;
      expect(second.leaseToken).not.toBe(first.leaseToken);
      expect(await outbox.finishAttempt(first, { statusCode: 200, error: null }, { state: "delivered" }, now + minute)).toBe(false);
      expect(await outbox.finishAttempt(second, { statusCode: 503, error: null }, { state: "pending", nextAttemptAt: now + 2 * minute }, now + minute)).toBe(true);
      expect(await claimOf(session.clientId, now + 2 * minute - 1)).toBeUndefined();
      expect(await rowsFor(session.clientId)).toMatchObject([{ state: "pending", attempts: 1, last_status_code: 503 }]);
    });

    it(`finishes asked for at once each land, a stale lease refused per row${target.name === "sqlite" ? ", in one transaction" : ""}`, async () => {
      const sessions = await Promise.all(Array.from({ length: 6 }, () => sessionWithClient()));
      for (const s of sessions) await outbox.endSessions({ idHash: s.idHash }, now);
      const claimed = await outbox.claimDue(now, minute, 1000);
      const ours = sessions.map((s) => claimed.find((d) => d.clientId === s.clientId)!);
      const stale = { ...ours[2]!, leaseToken: "a lease given to another claim" };
      const counting = transactionsCounted(database.db);
      const watched = new LogoutOutboxRepository({ ...database, db: counting.db });
      const finishes = ours.map((d, i) =>
        watched.finishAttempt(i === 2 ? stale : d, { statusCode: 200 + i, error: null }, { state: "delivered" }, now + 1),
      );
      expect(await Promise.all(finishes)).toEqual([true, true, false, true, true, true]);
      const rows = await Promise.all(sessions.map(async (s) => (await rowsFor(s.clientId))[0]!));
      expect(rows.map((r) => ({ state: r.state, attempts: Number(r.attempts), code: r.last_status_code, leased: r.lease_token !== null }))).toEqual(
        ours.map((_, i) => (i === 2 ? { state: "pending", attempts: 0, code: null, leased: true } : { state: "delivered", attempts: 1, code: 200 + i, leased: false })),
      );
      // SQLite commits the finishes of one turn together, as the webhook outbox does; PostgreSQL runs one statement each.
      expect(counting.transactions()).toBe(target.name === "sqlite" ? 1 : 0);
    });

    it("the loop retries on the schedule with one jti, then gives up; a removed client is given up at once", async () => {
      const session = await sessionWithClient();
      const gone = await sessionWithClient();
      await outbox.endSessions({ idHash: session.idHash }, now);
      await outbox.endSessions({ idHash: gone.idHash }, now);
      await clients.delete(gone.clientId, now);
      const sender = new ScriptedSender();
      sender.answer = () => ({ error: "ECONNREFUSED", durationMs: 1 });
      let clock = now;
      const loop = new LogoutDeliveryLoop(outbox, clients, keys, sender, () => clock, { retryScheduleMs: [0, minute, minute], timeoutMs: 1000, pollMs: 10, maxInFlight: 8 }, "https://op.test", (error) => {
        throw error;
      }, () => 0.5);
      for (let attempt = 0; attempt < 4; attempt++) {
        await loop.tick();
        await loop.stop();
        clock += minute;
      }
      const sent = sender.sent.filter((r) => r.url === `https://${session.clientId}.example/bcl`);
      expect(sent).toHaveLength(3);
      const jtis = sent.map((r) => decodeJwt(new URLSearchParams(r.body).get("logout_token")!).jti);
      expect(new Set(jtis).size).toBe(1);
      expect(sent.every((r) => r.headers["content-type"] === "application/x-www-form-urlencoded")).toBe(true);
      expect(await rowsFor(session.clientId)).toMatchObject([{ state: "exhausted", attempts: 3, last_error: "ECONNREFUSED" }]);
      expect(sender.sent.filter((r) => r.url.includes(gone.clientId))).toEqual([]);
      expect(await rowsFor(gone.clientId)).toMatchObject([{ state: "exhausted", attempts: 1 }]);
    });
  });
}

/** The connection, with a count of the transactions begun through it. */
function transactionsCounted(db: Database["db"]): { db: Database["db"]; transactions: () => number } {
  let begun = 0;
  const counted = new Proxy(db, {
    get(target, property) {
      if (property === "transaction") {
        return () => {
          begun++;
          return target.transaction();
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db: counted, transactions: () => begun };
}

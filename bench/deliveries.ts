/**
 * Webhook deliveries a second, part of `npm run bench -- events`: the
 * service's own delivery loop (the composition root's, default settings but
 * for loopback addresses being allowed) sends the events of a CRL-sized
 * change to receivers on loopback, in another process, that answer 204 at
 * once. Timed from the loop's start to the last delivery recorded as done in
 * the outbox (the receivers' counts must then equal the deliveries).
 *
 * Several accounts, one endpoint each, as a refresh that revokes many
 * certificates touches many tenants; each endpoint gets at most its bound of
 * attempts at once (SHOMEI_WEBHOOK_CONCURRENCY_PER_ENDPOINT, default 4).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { createInterface } from "node:readline";
import { sql } from "kysely";
import { createDomain } from "../src/app/compose.ts";
import { loadConfig } from "../src/config/load.ts";
import { newId } from "../src/domain/ids.ts";
import { openDatabase, type Database } from "../src/storage/database.ts";
import { migrateToLatest } from "../src/storage/migrate.ts";

export interface DeliveryMeasure {
  deliveries: number;
  endpoints: number;
  seconds: number;
  perSecond: number;
  /** This process's CPU time (the loop, its statements, its HTTP client) per delivery: what load on the machine changes least. */
  cpuMicrosEach: number;
  maxBlockMs: number;
}

/** A node:http server in a child process answering every POST 204; prints its port, then its count when asked. */
const receiverSource = `
  const http = require("node:http");
  let count = 0;
  const server = http.createServer((req, res) => { req.resume(); req.on("end", () => { count++; res.writeHead(204).end(); }); });
  server.keepAliveTimeout = 60000;
  server.listen(0, "127.0.0.1", () => console.log(server.address().port));
  process.stdin.on("data", () => console.log(count));
`;

async function startReceiver() {
  const child = spawn(process.execPath, ["-e", receiverSource], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => Number((await lines.next()).value);
  const port = await next();
  return {
    url: `http://127.0.0.1:${port}/hook`,
    count: async () => {
      child.stdin!.write("?\n");
      return next();
    },
    stop: () => child.kill(),
  };
}

/** `certificates` certificates of one account, each with a good status record, and a revocation of each in one transaction (its events). */
async function revokeMany(database: Database, accountId: string, certificates: number, now: number): Promise<void> {
  const userId = newId();
  await database.db.insertInto("certificate_users").values({ id: userId, account_id: accountId, created_at: now }).execute();
  const ids = Array.from({ length: certificates }, () => newId());
  const record = (certificateId: string, status: "good" | "revoked", at: number) => ({
    id: newId(), account_id: accountId, certificate_id: certificateId, status, check_method: "crl", check_purpose: "check",
    source_updated_at: at, revoked_at: status === "revoked" ? at : null, revoked_reason: status === "revoked" ? 1 : null, created_at: at,
  });
  await database.db.insertInto("certificates").values(ids.map((id) => ({
    id, account_id: accountId, user_id: userId, type: "jpki_card_digital_signature", origin: "verified",
    serial_number: randomBytes(16).toString("hex"), issuer: "CN=deliveries bench CA", subject: "", not_before: now - 86_400_000,
    not_after: now + 86_400_000, fingerprint_sha256: randomBytes(32).toString("hex"), crl_distribution_points: "[]",
    certificate_pem: "", created_at: now, trust_anchor: "sha256:deliveries-bench", ocsp_urls: "[]",
  }))).execute();
  await database.db.insertInto("certificate_statuses").values(ids.map((id) => record(id, "good", now - 1000))).execute();
  await database.db.transaction().execute((trx) => trx.insertInto("certificate_statuses").values(ids.map((id) => record(id, "revoked", now))).execute());
}

export async function measureDeliveries(dir: string, probe: { reset(): void; max: number }, options = { endpoints: 8, eventsEach: 1_000 }): Promise<DeliveryMeasure> {
  const receiver = await startReceiver();
  const file = path.join(dir, "deliveries.db");
  const config = loadConfig({
    env: { SHOMEI_MODE: "production", DATABASE_URL: `sqlite:${file}`, SHOMEI_DATA_DIR: dir, SHOMEI_WEBHOOK_ALLOW_PRIVATE: "true", SHOMEI_LOG_LEVEL: "silent" },
  });
  const database = await openDatabase(config.databaseUrl);
  try {
    await migrateToLatest(database);
    const domain = createDomain(config, database, randomBytes(32));
    const now = Date.now();
    for (let i = 0; i < options.endpoints; i++) {
      const accountId = newId();
      await database.db.insertInto("accounts").values({ id: accountId, name: `deliveries-${i}`, api_status: "active", created_at: now, updated_at: now }).execute();
      await domain.webhooks.create(accountId, { url: receiver.url, eventTypes: [], description: "bench" });
      await revokeMany(database, accountId, options.eventsEach, now);
    }
    const deliveries = Number((await sql<{ n: number }>`select count(*) as n from webhook_deliveries`.execute(database.db)).rows[0]!.n);
    if (deliveries !== options.endpoints * options.eventsEach) throw new Error(`${deliveries} deliveries queued, expected ${options.endpoints * options.eventsEach}`);
    // The seeding above wrote tens of megabytes of log; in a service the checkpointer thread copies such a burst
    // as it is written (a CRL's events wait for it), so it is copied here before the loop, not by its first commit.
    await database.logCopied();
    probe.reset();
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    domain.webhookDelivery.start();
    // The loop's own count, not the outbox's (counting pending rows would cost the loop's thread more than it measures).
    while (domain.webhookDelivery.loop.counts.delivered + domain.webhookDelivery.loop.counts.failed < deliveries) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const maxBlockMs = probe.max;
    await domain.webhookDelivery.stop();
    const { delivered } = domain.webhookDelivery.loop.counts;
    if (delivered !== deliveries) throw new Error(`${delivered} attempts delivered for ${deliveries} deliveries`);
    const { pending } = await domain.webhookDelivery.loop.stats();
    if (pending !== 0) throw new Error(`${pending} deliveries still pending after ${delivered} delivered`);
    const received = await receiver.count();
    if (received !== deliveries) throw new Error(`the receivers counted ${received} requests for ${deliveries} deliveries`);
    return { deliveries, endpoints: options.endpoints, seconds, perSecond: deliveries / seconds, cpuMicrosEach: (cpu.user + cpu.system) / deliveries, maxBlockMs };
  } finally {
    await database.close();
    receiver.stop();
  }
}

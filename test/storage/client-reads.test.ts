import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OidcClient } from "../../src/domain/oidc/client.ts";
import { ClientsRepository } from "../../src/storage/clients-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";
import { StatementCounter } from "../support/statement-counter.ts";

const targets = await databaseTargets();

function client(clientId: string): OidcClient {
  return {
    clientId,
    name: `Client ${clientId}`,
    type: "confidential",
    tokenEndpointAuthMethod: "client_secret_basic",
    secretHash: "ab".repeat(32),
    jwks: null,
    redirectUris: [`https://${clientId}.example/cb`],
    allowedScopes: ["openid", "profile"],
    allowedAuthorizationDetailsTypes: [],
    requirePushedAuthorizationRequests: false,
    grantTypes: ["authorization_code", "refresh_token"],
    postLogoutRedirectUris: [],
    idTokenSignedResponseAlg: "ES256",
    dpopBoundAccessTokens: false,
    createdAt: 1_750_000_000_000,
  };
}

/**
 * Every PAR, authorization and token request looks its client up: kept in memory under the registrations'
 * version (migration 0022), read each time; on PostgreSQL concurrent reads share a statement.
 */
for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    const shared = target.name === "postgres";

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
      const repository = new ClientsRepository(database);
      for (const id of ["rp-a", "rp-b"]) await repository.save(client(id), 1_750_000_000_000);
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    it(`clients asked for at the same time ${shared ? "are read together" : "are read one statement each"}, and then kept`, async () => {
      const counter = new StatementCounter();
      const repository = new ClientsRepository({ ...database, db: database.db.withPlugin(counter) });
      const asked = ["rp-a", "rp-a", "rp-b", "nobody", "rp-a", "bad id!"];
      const found = await Promise.all(asked.map((id) => repository.find(id)));
      expect(found.map((c) => c?.clientId)).toEqual(["rp-a", "rp-a", "rp-b", undefined, "rp-a", undefined]);
      expect(found[2]).toMatchObject({ redirectUris: ["https://rp-b.example/cb"], tokenEndpointAuthMethod: "client_secret_basic" });
      expect(found[1]).toEqual(found[0]);
      // Each lookup reads the version and then the registration (on PostgreSQL, shared with the lookups running
      // beside it; on SQLite the version read is shared by the lookups of one turn); the malformed id is answered
      // without a statement.
      const versionReads = counter.statements.filter((s) => s === "select oidc_client_version").length;
      const registrationReads = counter.statements.filter((s) => s === "select oidc_clients").length;
      if (shared) {
        expect(versionReads).toBe(2);
        expect(registrationReads).toBeGreaterThanOrEqual(2);
        expect(registrationReads).toBeLessThan(5);
      } else {
        expect([versionReads, registrationReads]).toEqual([1, 5]);
      }

      // Once kept, a lookup reads the version alone, and every caller gets the one frozen registration.
      const again = new StatementCounter();
      const kept = new ClientsRepository({ ...database, db: database.db.withPlugin(again) });
      const first = await kept.find("rp-a");
      again.statements.length = 0;
      const second = await kept.find("rp-a");
      expect(second).toBe(first);
      expect(again.statements).toEqual(["select oidc_client_version"]);
      expect(Object.isFrozen(second) && Object.isFrozen(second!.redirectUris)).toBe(true);
      expect(() => (second!.redirectUris as string[]).push("https://evil.example/cb")).toThrow(TypeError);
      // An unknown client is not kept: it is asked for each time.
      again.statements.length = 0;
      await kept.find("nobody");
      await kept.find("nobody");
      expect(again.statements.filter((s) => s === "select oidc_clients")).toHaveLength(2);
    });

    it("a change made by another instance, or by hand, is seen on the next lookup", async () => {
      const other = await openDatabase(scratch.url);
      try {
        const repository = new ClientsRepository(database);
        const elsewhere = new ClientsRepository(other);
        await elsewhere.save(client("rp-c"), 1_750_000_000_000);
        expect((await repository.find("rp-c"))?.name).toBe("Client rp-c");
        await elsewhere.save({ ...client("rp-c"), redirectUris: ["https://rp-c.example/new"] }, 1_750_000_000_002);
        expect((await repository.find("rp-c"))?.redirectUris).toEqual(["https://rp-c.example/new"]);
        await other.db.updateTable("oidc_clients").set({ name: "Changed by hand" }).where("client_id", "=", "rp-c").execute();
        expect((await repository.find("rp-c"))?.name).toBe("Changed by hand");
        expect(await elsewhere.delete("rp-c", 1_750_000_000_003)).toBe(true);
        expect(await repository.find("rp-c")).toBeUndefined();
      } finally {
        await other.close();
      }
    });

    it("a change saved before a read is what that read sees", async () => {
      const repository = new ClientsRepository(database);
      await repository.save({ ...client("rp-b"), name: "Renamed" }, 1_750_000_000_001);
      const [first, second] = await Promise.all([repository.find("rp-b"), repository.find("rp-b")]);
      expect([first?.name, second?.name]).toEqual(["Renamed", "Renamed"]);
    });
  });
}

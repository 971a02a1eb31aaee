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

/** Every PAR and token request reads its client first: on PostgreSQL concurrent reads share a statement. */
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

    it(`clients asked for at the same time ${shared ? "are read together: the first alone, then the rest in one statement" : "are read one statement each"}, each caller with an object of its own`, async () => {
      const counter = new StatementCounter();
      const repository = new ClientsRepository({ ...database, db: database.db.withPlugin(counter) });
      const asked = ["rp-a", "rp-a", "rp-b", "nobody", "rp-a", "bad id!"];
      const found = await Promise.all(asked.map((id) => repository.find(id)));
      expect(found.map((c) => c?.clientId)).toEqual(["rp-a", "rp-a", "rp-b", undefined, "rp-a", undefined]);
      expect(found[2]).toMatchObject({ redirectUris: ["https://rp-b.example/cb"], tokenEndpointAuthMethod: "client_secret_basic" });
      expect(found[1]).toEqual(found[0]);
      expect(found[1]).not.toBe(found[0]);
      // The malformed id is answered without a statement.
      expect(counter.count).toBe(shared ? 2 : 5);
    });

    it("a change saved before a read is what that read sees", async () => {
      const repository = new ClientsRepository(database);
      await repository.save({ ...client("rp-b"), name: "Renamed" }, 1_750_000_000_001);
      const [first, second] = await Promise.all([repository.find("rp-b"), repository.find("rp-b")]);
      expect([first?.name, second?.name]).toEqual(["Renamed", "Renamed"]);
    });
  });
}

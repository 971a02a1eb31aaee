import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Accounts } from "../../src/domain/accounts/accounts.ts";
import { accessTokenKeyOf, ApiAccessTokens } from "../../src/domain/accounts/api-access-tokens.ts";
import { ApiOAuthClients } from "../../src/domain/accounts/oauth-clients.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { randomToken, sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { AccountsRepository } from "../../src/storage/accounts-repository.ts";
import { ApiAccessTokensRepository } from "../../src/storage/api-access-tokens-repository.ts";
import { ClientsRepository } from "../../src/storage/clients-repository.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { ExpiredRowsRepository } from "../../src/storage/expired-rows-repository.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";

/*
 * The access tokens of API accounts' clients and the clients themselves in
 * both databases (migration 0033): what a lookup reads, who may revoke, that
 * revoking and removing change the API auth version (so remembered lookups
 * are read again on every instance), and the sweep of expired tokens.
 */
const targets = await databaseTargets();
const hour = 3600 * 1000;

for (const target of targets) {
  describe.skipIf(!!target.unavailable)(targetTitle(target), () => {
    let scratch: ScratchDatabase;
    let database: Database;
    let now = 1_700_000_000_000;
    const clock = () => now;

    beforeAll(async () => {
      scratch = await target.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    /** An active account, the services over this database, and one client_secret_basic client of the account. */
    async function setup() {
      const accountStore = new AccountsRepository(database);
      const accounts = new Accounts(accountStore, clock);
      const account = await accounts.create(`st-${randomUUID().slice(0, 8)}`, "active");
      const repository = new ApiAccessTokensRepository(database, accountStore);
      const tokens = new ApiAccessTokens(repository, { issuer: "https://shomei.example", accessTokenLifetimeSeconds: 3600 }, clock);
      const registry = new ApiOAuthClients(new ClientsRepository(database), clock);
      const { client } = await registry.add(account.id, { authMethod: "client_secret_basic", scopes: ["certificate.status", "verify"] });
      return { accounts, account, accountStore, repository, tokens, registry, client };
    }

    const code = (promise: Promise<unknown>) => promise.then(() => "admitted", (e: unknown) => (e instanceof DomainError ? e.code : String(e)));

    it("a token is found with its account's API status, and refused once the status changes", async () => {
      const { accounts, account, tokens, client } = await setup();
      const { access_token, scope } = await tokens.grant(client, new Map([["scope", "verify"]]), "jkt-of-the-key");

      expect(scope).toBe("verify");
      expect(await tokens.authenticate(access_token)).toEqual({ accountId: account.id, clientId: client.clientId, scopes: ["verify"], dpopJkt: "jkt-of-the-key" });
      await accounts.setApiStatus(account.name, "suspended");
      expect(await code(tokens.authenticate(access_token))).toBe("api_use_suspended");
    });

    it("only the token's own client revokes it, and revoking changes the auth version", async () => {
      const { accountStore, repository, tokens, registry, account, client } = await setup();
      const { client: other } = await registry.add(account.id, { authMethod: "client_secret_basic" });
      const { access_token } = await tokens.grant(client, new Map(), undefined);
      await tokens.authenticate(access_token);
      const before = await accountStore.authVersion();

      await tokens.revoke(other, access_token);
      expect(await tokens.authenticate(access_token)).toMatchObject({ accountId: account.id });
      expect(await accountStore.authVersion()).toBe(before);

      await tokens.revoke(client, access_token);
      expect(await accountStore.authVersion()).toBeGreaterThan(before!);
      expect(await code(tokens.authenticate(access_token))).toBe("token_invalid");
      expect((await repository.findWithAccount(accessTokenKeyOf(access_token)))?.token.revokedAt).toBe(now);
    });

    it("removing a client deletes its tokens and changes the auth version; another account cannot remove it", async () => {
      const { accountStore, tokens, registry, client, account } = await setup();
      const stranger = await setup();
      const { access_token } = await tokens.grant(client, new Map(), undefined);

      expect(await code(registry.remove(stranger.account.id, client.clientId))).toBe("oauth_client_not_found");
      expect((await registry.list(account.id)).map((c) => c.clientId)).toEqual([client.clientId]);
      const before = await accountStore.authVersion();

      await registry.remove(account.id, client.clientId);

      expect(await accountStore.authVersion()).toBeGreaterThan(before!);
      expect(await code(tokens.authenticate(access_token))).toBe("token_invalid");
      expect(await registry.list(account.id)).toEqual([]);
      expect((await registry.list(stranger.account.id)).map((c) => c.clientId)).toEqual([stranger.client.clientId]);
    });

    it("tokens are stored under keys that begin with their issue time, so later ones sort after earlier ones", async () => {
      const { tokens, client } = await setup();
      const issued: { at: number; value: string }[] = [];
      for (let i = 0; i < 5; i++) {
        now += 1000;
        issued.push({ at: now, value: (await tokens.grant(client, new Map(), undefined)).access_token });
      }
      const rows = await database.db.selectFrom("api_access_tokens").select(["token_hash", "created_at"]).where("client_id", "=", client.clientId).orderBy("token_hash").execute();
      expect(rows.map((r) => Number(r.created_at))).toEqual(issued.map((t) => t.at));
      expect(rows.map((r) => r.token_hash.slice(0, 12))).toEqual(issued.map((t) => t.at.toString(16).padStart(12, "0")));
      expect(rows.map((r) => r.token_hash)).toEqual(issued.map((t) => accessTokenKeyOf(t.value)));
      for (const t of issued) expect(await tokens.authenticate(t.value)).toMatchObject({ clientId: client.clientId });
    });

    it("a token issued before keys were ordered (stored under its SHA-256) still authenticates, introspects and revokes", async () => {
      const { repository, tokens, client, account } = await setup();
      const value = `shmat_${randomToken()}`;
      await repository.insert({ tokenHash: sha256Hex(value), clientId: client.clientId, accountId: account.id, scopes: ["verify"], dpopJkt: null, createdAt: now, expiresAt: now + hour, revokedAt: null });

      expect(ApiAccessTokens.isAccessTokenValue(value)).toBe(true);
      expect(await tokens.authenticate(value)).toEqual({ accountId: account.id, clientId: client.clientId, scopes: ["verify"], dpopJkt: null });
      expect(await tokens.introspect(client, value)).toMatchObject({ active: true, client_id: client.clientId, scope: "verify" });
      await tokens.revoke(client, value);
      expect(await code(tokens.authenticate(value))).toBe("token_invalid");
      expect((await repository.findWithAccount(sha256Hex(value)))?.token.revokedAt).toBe(now);
    });

    it("an expired token is refused, and the sweep deletes it a day after", async () => {
      const { tokens, client } = await setup();
      const issuedAt = now;
      const { access_token } = await tokens.grant(client, new Map(), undefined);
      const hash = accessTokenKeyOf(access_token);
      now = issuedAt + hour;
      expect(await code(tokens.authenticate(access_token))).toBe("token_invalid");

      const sweep = new ExpiredRowsRepository(database);
      const cutoffs = { tokens: issuedAt + hour, interactions: 0, sessions: 0, loginAttempts: 0, ocspResponses: 0, dpopProofs: 0, jpkiSignRequests: 0 };
      await sweep.deleteExpired(cutoffs);
      expect(await new ApiAccessTokensRepository(database, new AccountsRepository(database)).findWithAccount(hash)).toBeDefined();
      await sweep.deleteExpired({ ...cutoffs, tokens: issuedAt + hour + 1 });
      expect(await new ApiAccessTokensRepository(database, new AccountsRepository(database)).findWithAccount(hash)).toBeUndefined();
    });
  });
}

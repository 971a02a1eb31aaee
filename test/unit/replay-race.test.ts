import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/domain/clock.ts";
import { registrationFromMetadata } from "../../src/domain/oidc/client-registration.ts";
import type { OidcClient } from "../../src/domain/oidc/client.ts";
import type { AuthorizationCodePayload } from "../../src/domain/oidc/flow/authorization-code.ts";
import { orderedSecret, randomToken, storedKeyOf } from "../../src/domain/oidc/flow/secrets.ts";
import { SigningKeys } from "../../src/domain/oidc/keys/signing-keys.ts";
import { OAuthError } from "../../src/domain/oidc/oauth-error.ts";
import { TokenService } from "../../src/domain/oidc/tokens/token-service.ts";
import { OidcUsers } from "../../src/domain/oidc/users.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OidcRepository } from "../../src/storage/oidc-repository.ts";
import { OneTimeRecords } from "../../src/storage/one-time-records.ts";
import { SigningKeysRepository } from "../../src/storage/signing-keys-repository.ts";
import type { TokenRow } from "../../src/domain/oidc/model.ts";
import { TokensRepository } from "../../src/storage/tokens-repository.ts";
import { databaseTargets, targetTitle, type ScratchDatabase } from "../support/databases.ts";

/**
 * A code or refresh token replayed while its first use is still storing tokens: the
 * replay's revocation finds nothing to revoke yet, so the first redemption
 * must notice the replay afterwards and revoke what it stored. The test holds
 * the first redemption inside its token insert until the replay is answered.
 */
const targets = await databaseTargets();

/** A TokensRepository whose next insert after arm() waits until `release` is called. */
class GatedTokens extends TokensRepository {
  private gate: Promise<void> | undefined;
  release: () => void = () => undefined;
  entered: Promise<void> = Promise.resolve();
  private signalEntered: () => void = () => undefined;

  arm(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
    this.entered = new Promise((resolve) => (this.signalEntered = resolve));
  }

  override async insert(tokens: readonly TokenRow[]): Promise<void> {
    const gate = this.gate;
    this.gate = undefined;
    if (gate) {
      this.signalEntered();
      await gate;
    }
    return super.insert(tokens);
  }
}

for (const t of targets) {
  describe.skipIf(!!t.unavailable)(targetTitle(t), () => {
    let scratch: ScratchDatabase;
    let database: Database;

    beforeAll(async () => {
      scratch = await t.create();
      database = await openDatabase(scratch.url);
      await migrateToLatest(database);
    });

    afterAll(async () => {
      await database?.close();
      await scratch?.drop();
    });

    const secretKey = randomBytes(32);
    let service: TokenService;
    let tokens: GatedTokens;
    let client: OidcClient;

    beforeAll(async () => {
      const now = Date.now();
      tokens = new GatedTokens(database);
      service = new TokenService(
        new OneTimeRecords(database),
        tokens,
        new OidcRepository(database),
        new SigningKeys(new SigningKeysRepository(database), secretKey, systemClock),
        { issuer: "https://op.example.test", accessTokenLifetimeSeconds: 3600, refreshTokenLifetimeSeconds: 86400, idTokenLifetimeSeconds: 3600 },
        systemClock,
      );
      ({ client } = registrationFromMetadata(
        { client_id: "race-client", client_secret: "race-secret-0123456789", redirect_uris: ["https://rp.example/cb"], scope: "openid offline_access" },
        now,
      ));
    });

    /** A fresh code of a fresh user and grant; returns the token request parameters. */
    async function newCode(): Promise<Map<string, string>> {
      const now = Date.now();
      const oidc = new OidcRepository(database);
      const user = await new OidcUsers(oidc, secretKey, systemClock).create({ login: `race-${randomBytes(4).toString("hex")}`, password: "a long password" });
      const grantId = randomToken();
      await oidc.saveGrant({ id: grantId, userId: user.id, clientId: client.clientId, scopes: ["openid", "offline_access"], authorizationDetails: [], createdAt: now, updatedAt: now, revokedAt: null });
      const code = orderedSecret(now);
      const payload: AuthorizationCodePayload = {
        clientId: client.clientId,
        redirectUri: "https://rp.example/cb",
        codeChallenge: null,
        nonce: null,
        scopes: ["openid", "offline_access"],
        authorizationDetails: [],
        grantId,
        userId: user.id,
        authTime: now,
        acr: "low",
        amr: ["pwd"],
      };
      await new OneTimeRecords(database).issue({ kind: "authorization_code", keyHash: storedKeyOf(code), owner: client.clientId, payload, now, ttlMs: 60_000 });
      return new Map([["code", code], ["redirect_uri", "https://rp.example/cb"]]);
    }

    const outcome = (work: Promise<unknown>) =>
      work.then(
        () => "issued",
        (error: unknown) => (error instanceof OAuthError ? error.error : `unexpected ${String(error)}`),
      );

    /** The family's tokens as the store reads them back (revoked with their family, too). */
    async function familyAsRead(family: string) {
      const keys = await database.db.selectFrom("oidc_tokens").select("token_hash").where("family", "=", family).execute();
      return Promise.all(keys.map(async (row) => (await tokens.find(row.token_hash))!));
    }

    async function expectFamilyRevoked(family: string, kinds: string[]): Promise<void> {
      const stored = await familyAsRead(family);
      expect(stored.map((token) => token.kind).sort()).toEqual(kinds);
      expect(stored.every((token) => token.revokedAt !== null)).toBe(true);
    }

    it("a code replayed during its first redemption: the tokens that redemption stores are revoked, and it fails too", async () => {
      const params = await newCode();
      tokens.arm();
      const first = outcome(service.exchangeCode(client, params));
      await tokens.entered;
      // The first redemption has consumed the code and is about to store its tokens.
      await expect(service.exchangeCode(client, params)).rejects.toMatchObject({ error: "invalid_grant" });
      tokens.release();
      expect(await first).toBe("invalid_grant");
      await expectFamilyRevoked(storedKeyOf(params.get("code")!), ["access", "refresh"]);
    });

    it("a refresh token replayed during its first use: the new tokens are revoked with the family, and the first use fails too", async () => {
      const params = await newCode();
      const issued = await service.exchangeCode(client, params);
      const refresh = new Map([["refresh_token", issued.refresh_token!]]);
      tokens.arm();
      const first = outcome(service.refresh(client, refresh));
      await tokens.entered;
      await expect(service.refresh(client, refresh)).rejects.toMatchObject({ error: "invalid_grant" });
      tokens.release();
      expect(await first).toBe("invalid_grant");
      await expectFamilyRevoked(storedKeyOf(params.get("code")!), ["access", "access", "refresh", "refresh"]);
    });

    it("without a replay, the same gated path issues normally", async () => {
      const params = await newCode();
      tokens.arm();
      const first = outcome(service.exchangeCode(client, params));
      await tokens.entered;
      tokens.release();
      expect(await first).toBe("issued");
      const stored = await familyAsRead(storedKeyOf(params.get("code")!));
      expect(stored.map((token) => token.revokedAt)).toEqual([null, null]);
    });
  });
}

import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registrationFromMetadata } from "../../src/domain/oidc/client-registration.ts";
import type { GrantRow, InteractionRow, OidcUserRow, SessionRow, SigningKeyRow, TokenRow } from "../../src/domain/oidc/model.ts";
import type { ClientStore, GrantStore, InteractionStore, OidcUserStore, SessionStore, SigningKeyStore, TokenStore } from "../../src/domain/oidc/stores.ts";
import type { AuthorizationCodePayload } from "../../src/domain/oidc/flow/authorization-code.ts";
import { OneTimePayloadMismatch } from "../../src/domain/one-time-kinds.ts";
import type { OneTimeKind, OneTimeStore } from "../../src/domain/single-use.ts";
import { ClientsRepository } from "../../src/storage/clients-repository.ts";
import { openDatabase } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OidcRepository } from "../../src/storage/oidc-repository.ts";
import { OneTimeRecords } from "../../src/storage/one-time-records.ts";
import { SigningKeysRepository } from "../../src/storage/signing-keys-repository.ts";
import { TokensRepository } from "../../src/storage/tokens-repository.ts";
import { databaseTargets, targetTitle } from "../support/databases.ts";
import { inMemoryOidcStores } from "../support/in-memory/index.ts";

/**
 * The in-memory ports (test/support/in-memory/) and the repositories
 * (src/storage/) answer these checks alike, so unit tests over the fakes test
 * what the server does: what is found when, what single use means, what
 * revoking reaches. A rule of a repository a fake does not keep fails here.
 */

interface Stores {
  oidc: OidcUserStore & SessionStore & InteractionStore & GrantStore;
  tokens: TokenStore;
  oneTime: OneTimeStore;
  signingKeys: SigningKeyStore;
  clients: ClientStore;
}

interface Implementation {
  name: string;
  unavailable?: string | undefined;
  open(): Promise<{ stores: Stores; close(): Promise<void>; overwritePayload: PayloadOverwrite }>;
}

/** Replaces a one-time record's stored payload behind the store's back (a row another program wrote, or edited by hand). */
type PayloadOverwrite = (kind: OneTimeKind, keyHash: string, payload: unknown) => Promise<void>;

const targets = await databaseTargets();

const implementations: Implementation[] = [
  {
    name: "in memory",
    open: async () => {
      const stores = inMemoryOidcStores();
      const overwritePayload: PayloadOverwrite = async (kind, keyHash, payload) => {
        const record = [...stores.tables.oneTimeRecords.values()].find((r) => r.kind === kind && r.keyHash === keyHash);
        if (!record) throw new Error("no such record");
        record.payload = JSON.parse(JSON.stringify(payload));
      };
      return { stores, close: async () => undefined, overwritePayload };
    },
  },
  ...targets.map(
    (target): Implementation => ({
      name: `${targetTitle(target)} repositories`,
      unavailable: target.unavailable,
      async open() {
        const scratch = await target.create();
        const database = await openDatabase(scratch.url);
        await migrateToLatest(database);
        return {
          stores: {
            oidc: new OidcRepository(database),
            tokens: new TokensRepository(database),
            oneTime: new OneTimeRecords(database),
            signingKeys: new SigningKeysRepository(database),
            clients: new ClientsRepository(database),
          },
          async close() {
            await database.close();
            await scratch.drop();
          },
          async overwritePayload(kind, keyHash, payload) {
            await database.db.updateTable("one_time_records").set({ payload: JSON.stringify(payload) }).where("kind", "=", kind).where("key_hash", "=", keyHash).execute();
          },
        };
      },
    }),
  ),
];

const now = 1_750_000_000_000;
const minute = 60_000;

/** A fresh value for a key or id, so that checks sharing a database never meet. */
function fresh(prefix = ""): string {
  return `${prefix}${randomBytes(16).toString("hex")}`;
}

for (const implementation of implementations) {
  describe.skipIf(!!implementation.unavailable)(implementation.name, () => {
    let stores: Stores;
    let close: () => Promise<void> = async () => undefined;
    let overwritePayload: PayloadOverwrite;

    beforeAll(async () => {
      ({ stores, close, overwritePayload } = await implementation.open());
    });
    afterAll(() => close());

    async function user(): Promise<OidcUserRow> {
      const row: OidcUserRow = {
        id: fresh().slice(0, 32),
        login: fresh("login-"),
        passwordHash: "hash",
        totpSecretSealed: null,
        totpLastStep: null,
        name: "Name",
        localizedNames: [{ tag: "ja", value: "名前" }],
        email: null,
        createdAt: now,
      };
      await stores.oidc.insertUser(row);
      return row;
    }

    async function grant(userId: string, clientId: string, updatedAt = now, scopes = ["openid"]): Promise<GrantRow> {
      const row: GrantRow = { id: fresh(), userId, clientId, scopes, authorizationDetails: [{ type: "t", n: 1 }], createdAt: now, updatedAt, revokedAt: null };
      await stores.oidc.saveGrant(row);
      return row;
    }

    function token(grantRow: GrantRow, values: Partial<TokenRow> = {}): TokenRow {
      return {
        tokenHash: fresh(),
        kind: "refresh",
        family: fresh(),
        clientId: grantRow.clientId,
        userId: grantRow.userId,
        grantId: grantRow.id,
        scopes: grantRow.scopes,
        authorizationDetails: [],
        authTime: now,
        acr: "low",
        amr: ["pwd"],
        sid: "sid",
        claimsLocales: null,
        dpopJkt: null,
        createdAt: now,
        expiresAt: now + minute,
        consumedAt: null,
        revokedAt: null,
        ...values,
      };
    }

    describe("one-time records", () => {
      const payload: AuthorizationCodePayload = {
        clientId: "rp",
        redirectUri: "https://rp.example/cb",
        codeChallenge: null,
        nonce: "n",
        scopes: ["openid"],
        authorizationDetails: [{ type: "t", a: [1, "x"], b: null }],
        grantId: "g",
        userId: "u",
        authTime: now,
        acr: "low",
        amr: ["pwd"],
      };
      const issue = (keyHash: string, owner = "rp", ttlMs = minute, at = now) =>
        stores.oneTime.issue({ kind: "authorization_code", keyHash, owner, payload, now: at, ttlMs });

      it("are consumed once, by their owner, before they expire; a loser learns why", async () => {
        const key = fresh();
        await issue(key);
        expect(await stores.oneTime.consume("authorization_code", key, now, "other")).toEqual({ ok: false, reason: "foreign" });
        const won = await stores.oneTime.consume("authorization_code", key, now + 1, "rp");
        expect(won).toEqual({ ok: true, record: { kind: "authorization_code", keyHash: key, owner: "rp", payload, createdAt: now, expiresAt: now + minute, consumedAt: now + 1 } });
        expect(await stores.oneTime.consume("authorization_code", key, now + 2, "rp")).toMatchObject({ ok: false, reason: "consumed", record: { consumedAt: now + 1 } });
        expect(await stores.oneTime.consume("authorization_code", fresh(), now)).toEqual({ ok: false, reason: "unknown" });

        const expiring = fresh();
        await issue(expiring);
        expect(await stores.oneTime.consume("authorization_code", expiring, now + minute, "rp")).toMatchObject({ ok: false, reason: "expired", record: { consumedAt: null } });
      });

      it("of several consumers at once, exactly one wins", async () => {
        const key = fresh();
        await issue(key);
        const results = await Promise.all(Array.from({ length: 5 }, () => stores.oneTime.consume("authorization_code", key, now, "rp")));
        expect(results.filter((r) => r.ok)).toHaveLength(1);
      });

      it("issueIfAbsent leaves a record that is there as it is", async () => {
        const key = fresh();
        const input = { kind: "authorization_code" as const, keyHash: key, owner: "rp", payload, now, ttlMs: minute };
        expect(await stores.oneTime.issueIfAbsent(input)).toBe(true);
        expect(await stores.oneTime.issueIfAbsent({ ...input, payload: { ...payload, grantId: "other" } })).toBe(false);
        expect((await stores.oneTime.find("authorization_code", key))?.payload).toEqual(payload);
      });

      it("a payload its kind does not carry is read as OneTimePayloadMismatch, by find and by consume, which still uses the record up", async () => {
        const key = fresh();
        await issue(key);
        await overwritePayload("authorization_code", key, { ...payload, authTime: "yesterday" });
        await expect(stores.oneTime.find("authorization_code", key)).rejects.toThrow(OneTimePayloadMismatch);
        await expect(stores.oneTime.consume("authorization_code", key, now, "rp")).rejects.toThrow("(authTime: invalid_type)");
        await overwritePayload("authorization_code", key, payload);
        expect(await stores.oneTime.consume("authorization_code", key, now + 1, "rp")).toMatchObject({ ok: false, reason: "consumed", record: { consumedAt: now } });
      });

      it("deleteExpired removes the records that expired before the instant, and counts them", async () => {
        const [old, edge] = [fresh(), fresh()];
        await issue(old, "rp", 1, 1000);
        await issue(edge, "rp", 1000, 1000);
        expect(await stores.oneTime.deleteExpired(2000)).toBe(1);
        expect(await stores.oneTime.find("authorization_code", old)).toBeUndefined();
        expect(await stores.oneTime.find("authorization_code", edge)).toBeDefined();
        expect(await stores.oneTime.deleteExpired(2001)).toBe(1);
      });
    });

    describe("sessions", () => {
      it("are found until they expire, renewed by re-authentication, gone when deleted", async () => {
        const u = await user();
        const session: SessionRow = { idHash: fresh(), userId: u.id, authTime: now, acr: "low", amr: ["pwd"], createdAt: now, expiresAt: now + minute };
        await stores.oidc.insertSession(session);
        expect(await stores.oidc.findSession(session.idHash, now + minute - 1)).toEqual(session);
        expect(await stores.oidc.findSession(session.idHash, now + minute)).toBeUndefined();
        await stores.oidc.updateSessionAuthentication(session.idHash, { authTime: now + 5, acr: "high", amr: ["pwd", "otp"] });
        expect(await stores.oidc.findSession(session.idHash, now)).toEqual({ ...session, authTime: now + 5, acr: "high", amr: ["pwd", "otp"] });
        await stores.oidc.deleteSession(session.idHash);
        expect(await stores.oidc.findSession(session.idHash, now)).toBeUndefined();
      });

      it("a client issued codes in a session is remembered once: recording the pair again is no error", async () => {
        const u = await user();
        const pair = { sessionIdHash: fresh(), clientId: fresh("rp-"), sid: fresh(), userId: u.id, createdAt: now };
        await stores.oidc.recordSessionClient(pair);
        await expect(stores.oidc.recordSessionClient({ ...pair, createdAt: now + 1 })).resolves.toBeUndefined();
      });

      it("findSignedIn reads the session, its user and the user's latest live grant for the client", async () => {
        const u = await user();
        const session: SessionRow = { idHash: fresh(), userId: u.id, authTime: now, acr: "low", amr: ["pwd"], createdAt: now, expiresAt: now + minute };
        await stores.oidc.insertSession(session);
        expect(await stores.oidc.findSignedIn(session.idHash, now, "rp")).toEqual({ session, user: u, currentGrant: undefined });
        const older = await grant(u.id, "rp", now + 1);
        const latest = await grant(u.id, "rp", now + 2);
        const revoked = await grant(u.id, "rp", now + 3);
        await stores.oidc.revokeGrant(revoked.id, now);
        await grant(u.id, "other-rp", now + 4);
        expect(await stores.oidc.findSignedIn(session.idHash, now, "rp")).toEqual({ session, user: u, currentGrant: latest });
        expect(await stores.oidc.findLatestGrant(u.id, "rp")).toEqual(latest);
        expect(await stores.oidc.findGrant(older.id)).toEqual(older);
        expect(await stores.oidc.findSignedIn(session.idHash, now + minute, "rp")).toBeUndefined();
      });
    });

    describe("interactions", () => {
      const interaction = (): InteractionRow => ({
        idHash: fresh(),
        browserHash: fresh(),
        state: { clientId: "rp", request: { scopes: ["openid"] }, authenticated: false },
        createdAt: now,
        expiresAt: now + minute,
      });

      it("are found until they expire; their state is stored as JSON", async () => {
        const row = interaction();
        await stores.oidc.insertInteraction(row);
        expect(await stores.oidc.findInteraction(row.idHash, now)).toEqual(row);
        await stores.oidc.updateInteraction(row.idHash, { ...(row.state as object), userId: "u", locale: undefined });
        expect((await stores.oidc.findInteraction(row.idHash, now))?.state).toEqual({ ...(row.state as object), userId: "u" });
        expect(await stores.oidc.findInteraction(row.idHash, now + minute)).toBeUndefined();
        expect(await stores.oidc.findInteraction(row.idHash, 0)).toBeDefined();
      });

      it("end once: the first caller moves it to its ended hash, every other gets false", async () => {
        const row = interaction();
        const ended = fresh();
        await stores.oidc.insertInteraction(row);
        const results = await Promise.all(Array.from({ length: 5 }, () => stores.oidc.endInteraction(row.idHash, ended)));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await stores.oidc.endInteraction(row.idHash, ended)).toBe(false);
        expect(await stores.oidc.findInteraction(row.idHash, now)).toBeUndefined();
        expect(await stores.oidc.findInteraction(ended, now)).toEqual({ ...row, idHash: ended });
      });

      it("an expired one can still be ended (and then found under its ended hash)", async () => {
        const row = interaction();
        const ended = fresh();
        await stores.oidc.insertInteraction(row);
        expect(await stores.oidc.endInteraction(row.idHash, ended)).toBe(true);
        expect(await stores.oidc.findInteraction(ended, 0)).toMatchObject({ browserHash: row.browserHash });
      });
    });

    describe("grants", () => {
      it("saving again updates the rights and updatedAt, keeps createdAt; a revoked grant stays revoked", async () => {
        const u = await user();
        const g = await grant(u.id, "rp");
        await stores.oidc.saveGrant({ ...g, scopes: ["openid", "profile"], createdAt: now + 9, updatedAt: now + 10 });
        expect(await stores.oidc.findGrant(g.id)).toEqual({ ...g, scopes: ["openid", "profile"], updatedAt: now + 10 });
        await stores.oidc.revokeGrant(g.id, now);
        expect(await stores.oidc.findGrant(g.id)).toBeUndefined();
        await stores.oidc.saveGrant({ ...g, updatedAt: now + 11 });
        expect(await stores.oidc.findGrant(g.id)).toBeUndefined();
        expect(await stores.oidc.findLatestGrant(u.id, "rp")).toBeUndefined();
      });

      it("revoking one revokes its tokens, and no other grant's", async () => {
        const u = await user();
        const [g, other] = [await grant(u.id, "rp"), await grant(u.id, "rp")];
        const [mine, theirs] = [token(g), token(other)];
        await stores.tokens.insert([mine]);
        await stores.tokens.insert([theirs]);
        await stores.oidc.revokeGrant(g.id, now + 7);
        expect((await stores.tokens.find(mine.tokenHash))?.revokedAt).toBe(now + 7);
        expect((await stores.tokens.find(theirs.tokenHash))?.revokedAt).toBeNull();
      });
    });

    describe("users", () => {
      it("a TOTP time step is used once, and only forwards; a new secret starts again", async () => {
        const u = await user();
        expect(await stores.oidc.advanceTotpStep(u.id, 10)).toBe(true);
        expect(await stores.oidc.advanceTotpStep(u.id, 10)).toBe(false);
        expect(await stores.oidc.advanceTotpStep(u.id, 9)).toBe(false);
        expect(await stores.oidc.advanceTotpStep(u.id, 11)).toBe(true);
        await stores.oidc.updateUserSecrets(u.id, { totpSecretSealed: "new" });
        expect(await stores.oidc.findUser(u.id)).toMatchObject({ totpSecretSealed: "new", totpLastStep: null });
        expect(await stores.oidc.advanceTotpStep(u.id, 1)).toBe(true);
        expect(await stores.oidc.findUserByLogin(u.login)).toMatchObject({ id: u.id, localizedNames: u.localizedNames });
      });
    });

    describe("tokens", () => {
      it("are found as stored, with their grant's rights while the grant is live", async () => {
        const u = await user();
        const g = await grant(u.id, "rp");
        const t = token(g, { kind: "access", claimsLocales: ["ja", "en"], dpopJkt: "jkt" });
        const unlocalized = token(g, { family: t.family, claimsLocales: [] });
        await stores.tokens.insert([t, unlocalized]);
        expect(await stores.tokens.find(t.tokenHash)).toEqual(t);
        expect((await stores.tokens.find(unlocalized.tokenHash))?.claimsLocales).toBeNull();
        expect(await stores.tokens.findWithGrant(t.tokenHash)).toEqual({ token: t, grant: { scopes: g.scopes, authorizationDetails: g.authorizationDetails } });
        await stores.oidc.revokeGrant(g.id, now);
        expect((await stores.tokens.findWithGrant(t.tokenHash))?.grant).toBeUndefined();
        expect(await stores.tokens.find(fresh())).toBeUndefined();
      });

      it("a refresh token is consumed once, by its client, while live; the grant's rights come with it", async () => {
        const u = await user();
        const g = await grant(u.id, "rp");
        const t = token(g);
        await stores.tokens.insert([t]);
        expect(await stores.tokens.consumeRefresh(t.tokenHash, "other", now, null)).toBeUndefined();
        const used = await stores.tokens.consumeRefresh(t.tokenHash, "rp", now + 1, null);
        expect(used).toEqual({ token: { ...t, consumedAt: now + 1 }, grant: { scopes: g.scopes, authorizationDetails: g.authorizationDetails } });
        expect(await stores.tokens.consumeRefresh(t.tokenHash, "rp", now + 2, null)).toBeUndefined();

        const racing = token(g);
        await stores.tokens.insert([racing]);
        const results = await Promise.all(Array.from({ length: 5 }, () => stores.tokens.consumeRefresh(racing.tokenHash, "rp", now, null)));
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it("an expired, revoked or access token is not consumed as a refresh token", async () => {
        const u = await user();
        const g = await grant(u.id, "rp");
        const [expired, revoked, access] = [token(g), token(g, { revokedAt: now }), token(g, { kind: "access" })];
        await stores.tokens.insert([expired, revoked, access]);
        expect(await stores.tokens.consumeRefresh(expired.tokenHash, "rp", now + minute, null)).toBeUndefined();
        expect(await stores.tokens.consumeRefresh(revoked.tokenHash, "rp", now, null)).toBeUndefined();
        expect(await stores.tokens.consumeRefresh(access.tokenHash, "rp", now, null)).toBeUndefined();
        expect((await stores.tokens.find(expired.tokenHash))?.consumedAt).toBeNull();
      });

      it("a bound refresh token is consumed only with its key; an unbound one with any key or none", async () => {
        const u = await user();
        const g = await grant(u.id, "rp");
        const [bound, unbound] = [token(g, { dpopJkt: "key-a" }), token(g)];
        await stores.tokens.insert([bound, unbound]);
        expect(await stores.tokens.consumeRefresh(bound.tokenHash, "rp", now, null)).toBeUndefined();
        expect(await stores.tokens.consumeRefresh(bound.tokenHash, "rp", now, "key-b")).toBeUndefined();
        expect(await stores.tokens.consumeRefresh(bound.tokenHash, "rp", now, "key-a")).toBeDefined();
        expect(await stores.tokens.consumeRefresh(unbound.tokenHash, "rp", now, "key-b")).toBeDefined();
      });

      it("revoke marks the selected live tokens, saying whether any was: by token, family, grant or client", async () => {
        const u = await user();
        const clientId = fresh("rp-");
        const g = await grant(u.id, clientId);
        const family = fresh();
        const [a, b, c] = [token(g, { family }), token(g, { family }), token(g)];
        await stores.tokens.insert([a, b, c]);
        expect(await stores.tokens.revoke({ tokenHash: a.tokenHash }, now)).toBe(true);
        expect(await stores.tokens.revoke({ family }, now + 1)).toBe(true);
        expect(await stores.tokens.revoke({ family }, now + 2)).toBe(false);
        // Each shows the earlier of its own revocation and its family's.
        expect((await stores.tokens.find(a.tokenHash))?.revokedAt).toBe(now);
        expect((await stores.tokens.find(b.tokenHash))?.revokedAt).toBe(now + 1);
        expect((await stores.tokens.findWithGrant(b.tokenHash))?.token.revokedAt).toBe(now + 1);
        expect(await stores.tokens.revoke({ tokenHash: b.tokenHash }, now + 3)).toBe(false);
        expect(await stores.tokens.revoke({ grantId: g.id }, now + 4)).toBe(true);
        expect((await stores.tokens.find(c.tokenHash))?.revokedAt).toBe(now + 4);
        expect((await stores.tokens.find(b.tokenHash))?.revokedAt).toBe(now + 1);
        expect(await stores.tokens.revoke({ clientId }, now)).toBe(false);
      });

      it("a token stored into a revoked family is revoked, and a refresh token of it is not consumed", async () => {
        const u = await user();
        const g = await grant(u.id, "rp");
        const family = fresh();
        await stores.tokens.revoke({ family }, now);
        const late = token(g, { family });
        await stores.tokens.insert([late]);
        expect((await stores.tokens.find(late.tokenHash))?.revokedAt).toBe(now);
        expect(await stores.tokens.consumeRefresh(late.tokenHash, "rp", now + 1, null)).toBeUndefined();
        expect((await stores.tokens.find(late.tokenHash))?.consumedAt).toBeNull();
      });
    });

    describe("signing keys", () => {
      const key = (alg: string, generation: number, retiredAt: number | null = null): SigningKeyRow => ({
        kid: fresh(),
        generation,
        alg,
        publicJwk: { kty: "EC", kid: "k" },
        privateJwkSealed: "sealed",
        createdAt: now,
        activatedAt: now,
        retiredAt,
      });

      it("a generation is taken once per alg, a kid once; the newest is the highest generation", async () => {
        const [alg, other] = [fresh("a").slice(0, 12), fresh("b").slice(0, 12)];
        const first = key(alg, 1);
        expect(await stores.signingKeys.insertIfAbsent(first)).toBe(true);
        expect(await stores.signingKeys.insertIfAbsent(key(alg, 1))).toBe(false);
        expect(await stores.signingKeys.insertIfAbsent({ ...key(other, 5), kid: first.kid })).toBe(false);
        expect(await stores.signingKeys.insertIfAbsent(key(other, 1))).toBe(true);
        const second = key(alg, 2);
        await stores.signingKeys.insertIfAbsent(second);
        expect(await stores.signingKeys.findNewest(alg)).toEqual(second);
        const racing = await Promise.all(Array.from({ length: 4 }, () => stores.signingKeys.insertIfAbsent(key(alg, 3))));
        expect(racing.filter(Boolean)).toHaveLength(1);
      });

      it("retiring keeps a key published until the grace period has passed", async () => {
        const alg = fresh("c").slice(0, 12);
        const [old, current] = [key(alg, 1), key(alg, 2)];
        await stores.signingKeys.insertIfAbsent(old);
        await stores.signingKeys.insertIfAbsent(current);
        expect(await stores.signingKeys.retireOlderThan(alg, 2, now)).toBe(1);
        expect(await stores.signingKeys.retireOlderThan(alg, 2, now + 1)).toBe(0);
        const published = async (retiredAfter: number) => (await stores.signingKeys.listPublished(retiredAfter)).filter((k) => k.alg === alg).map((k) => k.kid);
        expect(await published(now - 1)).toEqual([current.kid, old.kid]);
        expect(await published(now)).toEqual([current.kid]);
      });
    });

    describe("clients", () => {
      it("saving again replaces the registration and keeps createdAt; removing revokes its grants and tokens", async () => {
        const clientId = fresh("rp-");
        const registration = registrationFromMetadata({ client_id: clientId, client_secret: "a client secret of 32 characters", redirect_uris: ["https://rp.example/cb"] }, now).client;
        await stores.clients.save(registration, now);
        expect(await stores.clients.find(clientId)).toEqual(registration);
        await stores.clients.save({ ...registration, name: "Renamed", createdAt: now + 5 }, now + 5);
        expect(await stores.clients.find(clientId)).toEqual({ ...registration, name: "Renamed" });
        const u = await user();
        const g = await grant(u.id, clientId);
        const t = token(g);
        await stores.tokens.insert([t]);
        expect(await stores.clients.delete(clientId, now + 6)).toBe(true);
        expect(await stores.clients.find(clientId)).toBeUndefined();
        expect(await stores.oidc.findGrant(g.id)).toBeUndefined();
        expect((await stores.tokens.find(t.tokenHash))?.revokedAt).toBe(now + 6);
        expect(await stores.clients.delete(clientId, now + 7)).toBe(false);
      });
    });
  });
}

import { calculateJwkThumbprint, exportJWK, importJWK, type CryptoKey, type JWK } from "jose";
import type { SigningKeyRow } from "../model.ts";
import type { SigningKeyStore } from "../stores.ts";
import type { Clock } from "../../clock.ts";
import { open, seal } from "../../credentials/secret-box.ts";
import {
  algorithmKeys,
  privateMatchesPublic,
  privateMembers,
  publicJwk,
  SigningKeyError,
  signingAlgs,
  supportedAlg,
  type PublicSigningJwk,
  type SigningAlg,
} from "./signing-algorithms.ts";

export { defaultSigningAlg, signingAlgs, SigningKeyError, type PublicSigningJwk, type SigningAlg } from "./signing-algorithms.ts";

export interface ActiveSigningKey {
  kid: string;
  alg: SigningAlg;
  privateKey: CryptoKey;
}

export interface SigningKeysOptions {
  /** How long an active key is kept in memory before the database is asked again. Default 60 s. */
  cacheMs?: number;
  /**
   * How long a retired key stays in the JWKS. Must exceed the longest lifetime
   * of anything signed with it plus cacheMs (another instance may sign with a
   * key for up to cacheMs after it was retired). Default 24 h.
   */
  retiredGraceMs?: number;
}

interface Cached {
  key: ActiveSigningKey;
  generation: number;
  expiresAt: number;
}

/**
 * The provider's ID token signing keys, in the database so every instance signs
 * with the same key and publishes the same set.
 *
 * Each algorithm (ES256, RS256, PS256, EdDSA) has its own line of keys, numbered by
 * generation within the algorithm. Its active key is the key of the highest
 * generation. The first call for an algorithm creates one if there is none (or
 * if that key was retired). Creation and rotation insert the next generation
 * number if it is still free for that algorithm and then read back whichever
 * key won, so instances racing each other settle on one key per algorithm.
 * rotate() retires the algorithm's older keys; a retired key no longer signs
 * but stays in the JWKS for a grace period, so tokens it signed still verify.
 *
 * Private keys are sealed with the server key (associated data = kid). Each
 * active key is cached in memory for cacheMs, so signing does not read the
 * database per token; a rotation by another instance is seen within that time.
 * The JWKS is read from the database on each call: a key another instance
 * creates signs at once, so a relying party that fetches the set after meeting
 * its kid must find it there.
 */
export class SigningKeys {
  private readonly cacheMs: number;
  private readonly retiredGraceMs: number;
  private readonly cached = new Map<SigningAlg, Cached>();
  private readonly loading = new Map<SigningAlg, Promise<ActiveSigningKey>>();

  constructor(
    private readonly repository: SigningKeyStore,
    private readonly secretKey: Buffer,
    private readonly clock: Clock,
    options: SigningKeysOptions = {},
  ) {
    this.cacheMs = options.cacheMs ?? 60_000;
    this.retiredGraceMs = options.retiredGraceMs ?? 24 * 60 * 60 * 1000;
    if (!(this.cacheMs >= 0) || !(this.retiredGraceMs > this.cacheMs)) {
      throw new RangeError("signing keys: cacheMs must be >= 0 and retiredGraceMs greater than cacheMs");
    }
  }

  /** The key to sign with for alg; creates the algorithm's first key if there is none. */
  async active(alg: SigningAlg): Promise<ActiveSigningKey> {
    supportedAlg(alg);
    const cached = this.cached.get(alg);
    if (cached && this.clock() < cached.expiresAt) return cached.key;
    // Concurrent callers share one load.
    let loading = this.loading.get(alg);
    if (!loading) {
      loading = this.load(alg).finally(() => this.loading.delete(alg));
      this.loading.set(alg, loading);
    }
    return loading;
  }

  /**
   * Makes a new key the active one for alg and retires the algorithm's older
   * keys (still published for the grace period). Rotations by several
   * instances at the same moment may collapse into one: each then reports the
   * key that won. retiredKid is the key that was active before, if any.
   */
  async rotate(alg: SigningAlg): Promise<{ alg: SigningAlg; newKid: string; retiredKid?: string }> {
    supportedAlg(alg);
    const previous = await this.repository.findNewest(alg);
    const current = await this.createAfter(alg, previous);
    await this.repository.retireOlderThan(alg, current.generation, this.clock());
    this.remember(alg, current.generation, await this.unseal(current));
    return previous && previous.retiredAt === null && previous.kid !== current.kid
      ? { alg, newKid: current.kid, retiredKid: previous.kid }
      : { alg, newKid: current.kid };
  }

  /** The JWKS to publish: every algorithm's active key and keys retired within the grace period. Public members only. */
  async jwks(): Promise<{ keys: PublicSigningJwk[] }> {
    const rows = await this.publishedRows();
    return { keys: rows.map((row) => publicJwk(row.publicJwk, row.kid, supportedAlg(row.alg))) };
  }

  /** The published keys (what jwks() serves), with their state, by algorithm and newest first: for operators. */
  async published(): Promise<{ kid: string; alg: string; generation: number; createdAt: number; retiredAt: number | null }[]> {
    const rows = await this.publishedRows();
    return rows.map(({ kid, alg, generation, createdAt, retiredAt }) => ({ kid, alg, generation, createdAt, retiredAt }));
  }

  private async publishedRows(): Promise<SigningKeyRow[]> {
    // Never without a key of an algorithm discovery lists: a relying party may fetch the set before the first token.
    await Promise.all(signingAlgs.map((alg) => this.active(alg)));
    const rows = await this.repository.listPublished(this.clock() - this.retiredGraceMs);
    // In discovery's order, whatever the database's collation makes of "EdDSA" beside "ES256"; newest first within each.
    const rank = (row: SigningKeyRow) => (signingAlgs as readonly string[]).indexOf(row.alg);
    return rows.sort((a, b) => rank(a) - rank(b) || b.generation - a.generation);
  }

  private async load(alg: SigningAlg): Promise<ActiveSigningKey> {
    const newest = await this.repository.findNewest(alg);
    const row = newest && newest.retiredAt === null ? newest : await this.createAfter(alg, newest);
    const cached = this.cached.get(alg);
    return this.remember(alg, row.generation, cached?.key.kid === row.kid ? cached.key : await this.unseal(row));
  }

  /**
   * Inserts a new key of alg with the generation after `newest` if no one has
   * taken it yet, then reads back the algorithm's newest key: ours, or the one
   * another instance inserted at the same moment. Either way every instance
   * sees the same one. An instance only gets here having seen `newest` as the
   * newest key, so two instances can only compete for the same generation,
   * never stack two keys.
   */
  private async createAfter(alg: SigningAlg, newest: SigningKeyRow | undefined): Promise<SigningKeyRow> {
    await this.repository.insertIfAbsent(await this.generate(alg, (newest?.generation ?? 0) + 1));
    const current = await this.repository.findNewest(alg);
    if (!current || current.retiredAt !== null) throw new SigningKeyError(`the ${alg} signing key just created is missing or retired`);
    return current;
  }

  /** Caches a key read from the database, unless a newer one (from a rotation here meanwhile) is cached already. */
  private remember(alg: SigningAlg, generation: number, key: ActiveSigningKey): ActiveSigningKey {
    const now = this.clock();
    const cached = this.cached.get(alg);
    if (cached && now < cached.expiresAt && cached.generation > generation) return cached.key;
    this.cached.set(alg, { key, generation, expiresAt: now + this.cacheMs });
    return key;
  }

  private async generate(alg: SigningAlg, generation: number): Promise<SigningKeyRow> {
    const { privateKey, publicKey } = await algorithmKeys[alg].generate();
    const pub = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(pub, "sha256");
    const sealedMembers = privateMembers(await exportJWK(privateKey), alg);
    const now = this.clock();
    return {
      kid,
      generation,
      alg,
      publicJwk: { ...publicJwk(pub, kid, alg) },
      privateJwkSealed: seal(this.secretKey, JSON.stringify(sealedMembers), kid),
      createdAt: now,
      activatedAt: now,
      retiredAt: null,
    };
  }

  private async unseal(row: SigningKeyRow): Promise<ActiveSigningKey> {
    const alg = supportedAlg(row.alg);
    const published = publicJwk(row.publicJwk, row.kid, alg);
    const jwk = JSON.parse(open(this.secretKey, row.privateJwkSealed, row.kid).toString("utf8")) as JWK;
    if (!privateMatchesPublic(jwk, published)) {
      throw new SigningKeyError(`signing key ${row.kid}: the private key does not match the public key`);
    }
    const privateKey = await importJWK(jwk, alg, { extractable: false });
    if (privateKey instanceof Uint8Array) throw new SigningKeyError(`signing key ${row.kid}: not an asymmetric key`);
    return { kid: row.kid, alg, privateKey };
  }
}

import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from "jose";
import type { SigningKeyRow } from "../model.ts";
import type { SigningKeyStore } from "../stores.ts";
import type { Clock } from "../../clock.ts";
import { open, seal } from "../../credentials/secret-box.ts";

/** The JWS algorithms the provider signs with. */
export type SigningAlg = "ES256";
export const defaultSigningAlg: SigningAlg = "ES256";
const curves: Record<SigningAlg, string> = { ES256: "P-256" };

export interface ActiveSigningKey {
  kid: string;
  alg: SigningAlg;
  privateKey: CryptoKey;
}

/** A published verification key: public members only. */
export interface PublicSigningJwk extends JWK {
  kty: "EC";
  crv: string;
  x: string;
  y: string;
  kid: string;
  alg: SigningAlg;
  use: "sig";
}

export interface SigningKeysOptions {
  /** How long the active key is kept in memory before the database is asked again. Default 60 s. */
  cacheMs?: number;
  /**
   * How long a retired key stays in the JWKS. Must exceed the longest lifetime
   * of anything signed with it plus cacheMs (another instance may sign with a
   * key for up to cacheMs after it was retired). Default 24 h.
   */
  retiredGraceMs?: number;
}

export class SigningKeyError extends Error {
  override name = "SigningKeyError";
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
 * The active key is the key of the highest generation. The first call creates
 * one if there is none (or if that key was retired). Creation and rotation
 * insert the next generation number if it is still free and then read back
 * whichever key won, so instances racing each other settle on one key.
 * rotate() retires the older keys; a retired key no longer signs but stays in
 * the JWKS for a grace period, so tokens it signed still verify.
 *
 * Private keys are sealed with the server key (associated data = kid). The
 * active key is cached in memory for cacheMs, so signing does not read the
 * database per token; a rotation by another instance is seen within that time.
 */
export class SigningKeys {
  private readonly cacheMs: number;
  private readonly retiredGraceMs: number;
  private cached: Cached | undefined;
  private loading: Promise<ActiveSigningKey> | undefined;

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

  /** The key to sign with; creates the first key if there is none. */
  async active(): Promise<ActiveSigningKey> {
    const cached = this.cached;
    if (cached && this.clock() < cached.expiresAt) return cached.key;
    // Concurrent callers share one load.
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  /**
   * Makes a new key the active one and retires the older keys (still published
   * for the grace period). Rotations by several instances at the same moment
   * may collapse into one: each then reports the key that won. retiredKid is
   * the key that was active before, if there was one.
   */
  async rotate(): Promise<{ newKid: string; retiredKid?: string }> {
    const previous = await this.repository.findNewest();
    const current = await this.createAfter(previous);
    await this.repository.retireOlderThan(current.generation, this.clock());
    this.remember(current.generation, await this.unseal(current));
    return previous && previous.retiredAt === null && previous.kid !== current.kid
      ? { newKid: current.kid, retiredKid: previous.kid }
      : { newKid: current.kid };
  }

  /** The JWKS to publish: the active key and keys retired within the grace period. Public members only. */
  async jwks(): Promise<{ keys: PublicSigningJwk[] }> {
    // Never an empty set: a relying party may fetch it before the first token is signed.
    await this.active();
    const rows = await this.repository.listPublished(this.clock() - this.retiredGraceMs);
    return { keys: rows.map((row) => publicJwk(row.publicJwk, row.kid, supportedAlg(row.alg))) };
  }

  /** The published keys (what jwks() serves), with their state, newest first: for operators. */
  async published(): Promise<{ kid: string; alg: string; generation: number; createdAt: number; retiredAt: number | null }[]> {
    await this.active();
    const rows = await this.repository.listPublished(this.clock() - this.retiredGraceMs);
    return rows.map(({ kid, alg, generation, createdAt, retiredAt }) => ({ kid, alg, generation, createdAt, retiredAt }));
  }

  private async load(): Promise<ActiveSigningKey> {
    const newest = await this.repository.findNewest();
    const row = newest && newest.retiredAt === null ? newest : await this.createAfter(newest);
    const cached = this.cached;
    return this.remember(row.generation, cached?.key.kid === row.kid ? cached.key : await this.unseal(row));
  }

  /**
   * Inserts a new key with the generation after `newest` if no one has taken
   * it yet, then reads back the newest key: ours, or the one another instance
   * inserted at the same moment. Either way every instance sees the same one.
   * An instance only gets here having seen `newest` as the newest key, so two
   * instances can only compete for the same generation, never stack two keys.
   */
  private async createAfter(newest: SigningKeyRow | undefined): Promise<SigningKeyRow> {
    await this.repository.insertIfAbsent(await this.generate((newest?.generation ?? 0) + 1));
    const current = await this.repository.findNewest();
    if (!current || current.retiredAt !== null) throw new SigningKeyError("the signing key just created is missing or retired");
    return current;
  }

  /** Caches a key read from the database, unless a newer one (from a rotation here meanwhile) is cached already. */
  private remember(generation: number, key: ActiveSigningKey): ActiveSigningKey {
    const now = this.clock();
    const cached = this.cached;
    if (cached && now < cached.expiresAt && cached.generation > generation) return cached.key;
    this.cached = { key, generation, expiresAt: now + this.cacheMs };
    return key;
  }

  private async generate(generation: number): Promise<SigningKeyRow> {
    const alg = defaultSigningAlg;
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const pub = await exportJWK(publicKey);
    const priv = await exportJWK(privateKey);
    const kid = await calculateJwkThumbprint(pub, "sha256");
    const publicMembers = publicJwk(pub, kid, alg);
    const privateMembers = { kty: priv.kty, crv: priv.crv, x: priv.x, y: priv.y, d: priv.d };
    const now = this.clock();
    return {
      kid,
      generation,
      alg,
      publicJwk: { ...publicMembers },
      privateJwkSealed: seal(this.secretKey, JSON.stringify(privateMembers), kid),
      createdAt: now,
      activatedAt: now,
      retiredAt: null,
    };
  }

  private async unseal(row: SigningKeyRow): Promise<ActiveSigningKey> {
    const alg = supportedAlg(row.alg);
    const jwk = JSON.parse(open(this.secretKey, row.privateJwkSealed, row.kid).toString("utf8")) as JWK;
    if (jwk.kty !== "EC" || jwk.crv !== curves[alg] || jwk.x !== row.publicJwk.x || jwk.y !== row.publicJwk.y || typeof jwk.d !== "string") {
      throw new SigningKeyError(`signing key ${row.kid}: the private key does not match the public key`);
    }
    const privateKey = await importJWK(jwk, alg, { extractable: false });
    if (privateKey instanceof Uint8Array) throw new SigningKeyError(`signing key ${row.kid}: not an asymmetric key`);
    return { kid: row.kid, alg, privateKey };
  }
}

function supportedAlg(alg: string): SigningAlg {
  if (Object.hasOwn(curves, alg)) return alg as SigningAlg;
  throw new SigningKeyError(`unsupported signing key algorithm ${JSON.stringify(alg)}`);
}

/** Only the named public members: whatever else the source holds (d, above all) is left out. */
function publicJwk(source: Record<string, unknown>, kid: string, alg: SigningAlg): PublicSigningJwk {
  const { kty, crv, x, y } = source;
  if (kty !== "EC" || typeof crv !== "string" || typeof x !== "string" || typeof y !== "string") {
    throw new SigningKeyError(`signing key ${kid}: stored public key is not an EC key`);
  }
  return { kty, crv, x, y, kid, alg, use: "sig" };
}

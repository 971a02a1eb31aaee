import type { SigningKeyRow } from "../../../src/domain/oidc/model.ts";
import type { SigningKeyStore } from "../../../src/domain/oidc/stores.ts";
import { copied, InMemoryTables } from "./tables.ts";

/**
 * Signing keys in memory (src/storage/signing-keys-repository.ts): a kid and
 * a generation within its alg are each taken once, so of two racing
 * insertions of the same generation only one lands.
 */
export class InMemorySigningKeys implements SigningKeyStore {
  constructor(private readonly tables: InMemoryTables = new InMemoryTables()) {}

  async findNewest(alg: string): Promise<SigningKeyRow | undefined> {
    const newest = this.ofAlg(alg).sort((a, b) => b.generation - a.generation)[0];
    return newest && copied(newest);
  }

  async insertIfAbsent(key: SigningKeyRow): Promise<boolean> {
    if (this.tables.signingKeys.has(key.kid) || this.ofAlg(key.alg).some((k) => k.generation === key.generation)) return false;
    this.tables.signingKeys.set(key.kid, copied(key));
    return true;
  }

  async retireOlderThan(alg: string, generation: number, now: number): Promise<number> {
    const retiring = this.ofAlg(alg).filter((k) => k.retiredAt === null && k.generation < generation);
    for (const key of retiring) key.retiredAt = now;
    return retiring.length;
  }

  async listPublished(retiredAfter: number): Promise<SigningKeyRow[]> {
    return [...this.tables.signingKeys.values()]
      .filter((k) => k.retiredAt === null || k.retiredAt > retiredAfter)
      .sort((a, b) => (a.alg === b.alg ? b.generation - a.generation : a.alg < b.alg ? -1 : 1))
      .map(copied);
  }

  private ofAlg(alg: string): SigningKeyRow[] {
    return [...this.tables.signingKeys.values()].filter((k) => k.alg === alg);
  }
}

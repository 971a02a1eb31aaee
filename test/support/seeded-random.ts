/**
 * A small deterministic random source for fuzz tests: the same seed gives the
 * same sequence on every machine, so a failure can be replayed from its seed.
 * Not for secrets. mulberry32 over a 32-bit FNV-1a hash of the seed text.
 */
export class SeededRandom {
  private state: number;

  /** `parts` are joined into the seed text, e.g. (seed, caseIndex): each case gets its own stream. */
  constructor(...parts: (string | number)[]) {
    let hash = 0x811c9dc5;
    for (const char of parts.join(":")) {
      hash ^= char.charCodeAt(0);
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    this.state = hash;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, below). */
  int(below: number): number {
    return Math.floor(this.next() * below);
  }

  /** An integer in [min, max]. */
  range(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new TypeError("pick from an empty list");
    return items[this.int(items.length)]!;
  }

  /** One of the items, chosen with probability proportional to its weight. */
  weighted<T>(items: readonly (readonly [weight: number, item: T])[]): T {
    const total = items.reduce((sum, [weight]) => sum + weight, 0);
    let roll = this.next() * total;
    for (const [weight, item] of items) {
      roll -= weight;
      if (roll < 0) return item;
    }
    return items[items.length - 1]![1];
  }

  bytes(length: number): Buffer {
    const out = Buffer.alloc(length);
    for (let i = 0; i < length; i++) out[i] = this.int(256);
    return out;
  }

  /** A string of `length` characters drawn from `alphabet`. */
  text(length: number, alphabet: string): string {
    const chars = [...alphabet];
    let out = "";
    for (let i = 0; i < length; i++) out += chars[this.int(chars.length)];
    return out;
  }
}

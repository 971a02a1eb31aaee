import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Server-provided DPoP nonces (RFC 9449 section 8) without storage: a nonce
 * is a time slot and its HMAC under the server key, so every instance that
 * shares the key issues and accepts the same ones. A nonce is good in its
 * slot and the next, so one issued just before a slot ends still works.
 */
export class DpopNonces {
  constructor(
    private readonly secretKey: Buffer,
    private readonly slotMs: number,
  ) {
    if (!(slotMs > 0)) throw new RangeError("slotMs must be > 0");
  }

  /** The nonce to hand out now. */
  current(now: number): string {
    return this.nonceFor(Math.floor(now / this.slotMs));
  }

  accepts(nonce: string, now: number): boolean {
    const slot = Math.floor(now / this.slotMs);
    return [slot, slot - 1].some((s) => equal(nonce, this.nonceFor(s)));
  }

  private nonceFor(slot: number): string {
    const mac = createHmac("sha256", this.secretKey).update(`dpop-nonce:${slot}`).digest("base64url");
    return `${slot.toString(36)}.${mac}`;
  }
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

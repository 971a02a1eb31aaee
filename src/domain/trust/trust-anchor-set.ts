import type { TrustAnchor, TrustAnchors } from "./trust-anchor.ts";

/** The configured anchors and those an extension adds (the mock CA in mock mode), each known once it exists. */
export class TrustAnchorSet implements TrustAnchors {
  constructor(
    private readonly configured: readonly TrustAnchor[],
    private readonly added: readonly (() => Promise<TrustAnchor>)[] = [],
  ) {}

  async all(): Promise<readonly TrustAnchor[]> {
    if (this.added.length === 0) return this.configured;
    return [...this.configured, ...(await Promise.all(this.added.map((anchor) => anchor())))];
  }
}

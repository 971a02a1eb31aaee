import type { TrustAnchor, TrustAnchors } from "./trust-anchor.ts";

/** The configured anchors and, in mock mode only, the mock CA. */
export class TrustAnchorSet implements TrustAnchors {
  constructor(
    private readonly configured: readonly TrustAnchor[],
    private readonly mockAnchor?: () => Promise<TrustAnchor>,
  ) {}

  async all(): Promise<readonly TrustAnchor[]> {
    return this.mockAnchor ? [...this.configured, await this.mockAnchor()] : this.configured;
  }
}

/** The time a pace reads and waits on: the system's, or a test's. */
export interface PaceTimer {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/**
 * Spaces requests at least 1/perSecond apart, so that no second holds more
 * than perSecond of them: each wait takes the next free slot, so callers
 * that wait at once go one after another.
 */
export class RequestPace {
  private nextSlot = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly perSecond: number,
    private readonly timer: PaceTimer,
  ) {}

  async wait(): Promise<void> {
    const now = this.timer.now();
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + 1000 / this.perSecond;
    if (slot > now) await this.timer.sleep(slot - now);
  }
}

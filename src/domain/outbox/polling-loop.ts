/**
 * The schedule of an outbox's delivery loop (webhooks, logout tokens): runs
 * `tick` (which claims due rows and starts their attempts) never twice at
 * once; again at once when it said there may be more, or when woken during
 * it; otherwise after `pollMs`, to find rows queued by other instances and
 * retries come due. A failed tick is reported and the loop goes on.
 */
export class PollingLoop {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private ticking: Promise<void> | undefined;
  /** A wake that came during a tick: look again as soon as it ends. */
  private again = false;
  private stopped = true;

  constructor(
    /** Claims and starts what is due; true when there may be more due at once. */
    private readonly tick: () => Promise<boolean>,
    private readonly pollMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops ticking; resolves once a tick in progress has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
  }

  /** Looks for due rows now (some were just queued, or a slot came free). */
  wake(): void {
    if (this.stopped) return;
    if (this.ticking) this.again = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.ticking) return;
      this.again = false;
      this.ticking = this.tick()
        .catch((error: unknown) => {
          this.onError(error);
          return false;
        })
        .then((more) => {
          this.ticking = undefined;
          if (!this.stopped) this.schedule(more || this.again ? 0 : this.pollMs);
        });
    }, ms);
    this.timer.unref?.();
  }
}

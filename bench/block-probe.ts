/** The longest gap between ticks of a 1 ms interval: how long the event loop was held. */
export class BlockProbe {
  private last = performance.now();
  max = 0;
  private readonly timer = setInterval(() => {
    const now = performance.now();
    this.max = Math.max(this.max, now - this.last);
    this.last = now;
  }, 1);
  reset(): void {
    this.last = performance.now();
    this.max = 0;
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

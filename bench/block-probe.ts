/**
 * The longest gap between ticks of a 1 ms interval: how long the event loop
 * was held. Stages marked with `mark` say where the longest gap began and
 * ended, so a bench can name the part of its work that held the loop.
 */
export class BlockProbe {
  private last = performance.now();
  max = 0;
  private maxFrom = 0;
  private maxTo = 0;
  private marks: { at: number; stage: string }[] = [];
  private readonly timer = setInterval(() => {
    const now = performance.now();
    if (now - this.last > this.max) {
      this.max = now - this.last;
      this.maxFrom = this.last;
      this.maxTo = now;
    }
    this.last = now;
  }, 1);

  reset(): void {
    this.last = performance.now();
    this.max = 0;
    this.marks = [];
  }

  /** From now on, work belongs to `stage` (until the next mark). */
  mark(stage: string): void {
    this.marks.push({ at: performance.now(), stage });
  }

  /** The stages the longest gap began and ended in. */
  where(): string {
    // A gap that began before the first mark (the probe's last tick came a moment earlier) is the first stage's.
    const stageAt = (time: number) => (this.marks.findLast((m) => m.at <= time) ?? this.marks[0])?.stage ?? "unmarked";
    const from = stageAt(this.maxFrom);
    const to = stageAt(this.maxTo);
    return from === to ? from : `${from} → ${to}`;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

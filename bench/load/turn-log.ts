/**
 * The record of two servers taking turns on one CPU (bench/load/turns.ts):
 * when each was running, so that a side's rate is counted over its own turns
 * and a request's latency leaves out the time its server was stopped. Pure
 * arithmetic over the times it is given, kept apart so it can be tested.
 */
export type SideIndex = 0 | 1;

interface Stretch {
  from: number;
  /** Infinity while the stretch lasts. */
  to: number;
}

export class TurnLog {
  /** Each side's running stretches, in order. */
  private readonly running: [Stretch[], Stretch[]] = [[], []];
  private current: SideIndex | undefined;
  /** When the log began, as the first side was resumed: no request was sent before it (stoppedWithin counts time before it as running). */
  private readonly began: number;

  /** `first` runs from `at` (ms, any monotonic clock), the other side is stopped. */
  constructor(first: SideIndex, at: number) {
    this.current = first;
    this.began = at;
    this.running[first].push({ from: at, to: Number.POSITIVE_INFINITY });
  }

  /** The side running now (undefined once ended). */
  get runningSide(): SideIndex | undefined {
    return this.current;
  }

  /** From `at`, `side` runs and the other is stopped. */
  switchTo(side: SideIndex, at: number): void {
    if (this.current === side) return;
    this.stopCurrent(at);
    this.current = side;
    this.running[side].push({ from: at, to: Number.POSITIVE_INFINITY });
  }

  /** From `at`, both sides are stopped. */
  end(at: number): void {
    this.stopCurrent(at);
    this.current = undefined;
  }

  /** How long `side` has run, up to `now` for a stretch still running, ms. */
  runningMs(side: SideIndex, now: number): number {
    return this.running[side].reduce((total, s) => total + Math.max(0, Math.min(s.to, now) - s.from), 0);
  }

  /** How much of the interval [from, to] `side` was stopped, ms (time before the log began counts as running). */
  stoppedWithin(side: SideIndex, from: number, to: number): number {
    const stretches = this.running[side];
    const start = Math.max(from, this.began);
    if (to <= start) return 0;
    let running = 0;
    // Requests are short: walk back from the latest stretch until one ends before the interval.
    for (let i = stretches.length - 1; i >= 0; i--) {
      const s = stretches[i]!;
      if (s.to <= start) break;
      running += Math.max(0, Math.min(s.to, to) - Math.max(s.from, start));
    }
    return to - start - running;
  }

  private stopCurrent(at: number): void {
    if (this.current === undefined) return;
    const stretch = this.running[this.current].at(-1)!;
    stretch.to = at;
  }
}

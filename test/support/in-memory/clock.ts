import type { Clock } from "../../../src/domain/clock.ts";

/** Time that moves only when a test moves it: rules about lifetimes are tested without waiting. */
export class ManualClock {
  constructor(public now: number = Date.UTC(2030, 0, 1, 9, 0, 0)) {}

  /** The domain's Clock, reading this one. */
  readonly clock: Clock = () => this.now;

  advance(ms: number): void {
    this.now += ms;
  }
}

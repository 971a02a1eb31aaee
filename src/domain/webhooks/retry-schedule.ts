import type { AfterAttempt } from "./model.ts";

/** The default delays before each attempt (docs/events.md): at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const defaultRetryScheduleMs = [0, 5e3, 5 * 60e3, 30 * 60e3, 2 * 3600e3, 5 * 3600e3, 10 * 3600e3, 10 * 3600e3];

/** Jitter of ±10 %, so receivers that failed together are not all retried in the same instant. */
const jitter = 0.1;

/**
 * When the next attempt is due after `attemptsDone` attempts failed, or
 * undefined when the schedule is exhausted. `random` is in [0, 1).
 */
export function nextAttemptAt(schedule: readonly number[], attemptsDone: number, now: number, random: number): number | undefined {
  const delay = schedule[attemptsDone];
  if (delay === undefined) return undefined;
  return now + Math.round(delay * (1 - jitter + 2 * jitter * random));
}

/** Whether an answer's status means the receiver took the delivery (2xx). */
export function isDelivered(statusCode: number): boolean {
  return statusCode >= 200 && statusCode < 300;
}

/**
 * An outbox row's state after a failed attempt: due again on the schedule,
 * or exhausted past its end or when no attempt can succeed (`hopeless`).
 * `random` is asked only for a retry.
 */
export function afterFailure(schedule: readonly number[], attemptsDone: number, now: number, random: () => number, hopeless: boolean): AfterAttempt {
  const next = hopeless ? undefined : nextAttemptAt(schedule, attemptsDone, now, random());
  return next === undefined ? { state: "exhausted" } : { state: "pending", nextAttemptAt: next };
}

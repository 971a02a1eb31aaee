import type { AfterAttempt } from "../../webhooks/model.ts";

/** A client issued a code in a session: it is told when the session ends (Back-Channel Logout 1.0). */
export interface SessionClientRow {
  sessionIdHash: string;
  clientId: string;
  /** The session's `sid`, as the client's ID tokens carry it. */
  sid: string;
  userId: string;
  createdAt: number;
}

/** Which sessions end: one (by its id's hash), every one of a user, or every one expired before an instant. */
export type EndedSessions = { idHash: string } | { userId: string } | { expiredBefore: number };

/** One logout token to send, as an instance claimed it from the outbox. */
export interface ClaimedLogout {
  /** The row's id, which is also the token's jti: the same on every attempt, so a receiver can tell a repeat. */
  id: string;
  clientId: string;
  userId: string;
  sid: string;
  /** Attempts finished before this one. */
  attempts: number;
  /** Proves the claim: an outcome is recorded only while the lease is still this one's. */
  leaseToken: string;
}

/** What happens to an outbox row after an attempt: as for a webhook delivery. */
export type LogoutAfterAttempt = AfterAttempt;

/** What an attempt got back, kept on the row (bounded) for the operator. */
export interface LogoutAttemptResult {
  statusCode: number | null;
  error: string | null;
}

/** What Back-Channel Logout needs from storage. */
export interface LogoutOutboxStore {
  /**
   * Ends the selected sessions and, in the same transaction, queues one
   * delivery per (session, client that registered a backchannel_logout_uri
   * and was issued a code in it), due now. Returns how many sessions ended
   * and how many deliveries were queued.
   */
  endSessions(selection: EndedSessions, now: number): Promise<{ sessions: number; deliveries: number }>;
  /** Claims up to `limit` due deliveries for `leaseMs`; one another instance holds a live lease on is never returned. */
  claimDue(now: number, leaseMs: number, limit: number): Promise<ClaimedLogout[]>;
  /** Records an attempt's outcome; false (nothing written) when the lease was lost meanwhile. */
  finishAttempt(delivery: ClaimedLogout, result: LogoutAttemptResult, after: LogoutAfterAttempt, now: number): Promise<boolean>;
  /** Deletes finished deliveries last changed before the cutoff. */
  prune(before: number): Promise<number>;
}

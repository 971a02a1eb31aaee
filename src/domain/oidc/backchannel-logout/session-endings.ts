import type { Clock } from "../../clock.ts";
import { sha256Hex } from "../flow/secrets.ts";
import type { EndedSessions, LogoutOutboxStore } from "./model.ts";

/**
 * Every way a session ends goes through here (the end-session endpoint, the
 * sign-out page, an operator's `shomei user sign-out`, a password change;
 * expiry goes through the sweep's own statement, src/storage/ended-sessions.ts):
 * the session is deleted and the logout tokens of the clients that were
 * issued codes in it are queued in the same transaction. Nothing waits on
 * the clients: the delivery loop sends them, and `onQueued` only tells it
 * to look now rather than at its next poll.
 */
export class SessionEndings {
  private listeners: (() => void)[] = [];

  constructor(
    private readonly store: Pick<LogoutOutboxStore, "endSessions">,
    private readonly clock: Clock,
  ) {}

  /** Called whenever deliveries were queued (the delivery loop's wake). */
  onQueued(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Ends the session of this cookie value. */
  endSession(sessionId: string): Promise<number> {
    return this.end({ idHash: sha256Hex(sessionId) });
  }

  /** Ends every session of the user; returns how many there were. */
  endUserSessions(userId: string): Promise<number> {
    return this.end({ userId });
  }

  private async end(selection: EndedSessions): Promise<number> {
    const ended = await this.store.endSessions(selection, this.clock());
    if (ended.deliveries > 0) for (const listener of this.listeners) listener();
    return ended.sessions;
  }
}

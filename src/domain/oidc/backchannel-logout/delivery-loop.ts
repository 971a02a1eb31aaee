import { PollingLoop } from "../../outbox/polling-loop.ts";
import type { Clock } from "../../clock.ts";
import type { WebhookSender } from "../../webhooks/model.ts";
import { afterFailure, isDelivered } from "../../webhooks/retry-schedule.ts";
import type { ClientLookup } from "../stores.ts";
import type { SigningKeys } from "../keys/signing-keys.ts";
import { logoutTokenClaims, signLogoutToken } from "./logout-token.ts";
import type { ClaimedLogout, LogoutAfterAttempt, LogoutAttemptResult, LogoutOutboxStore } from "./model.ts";

/** Deliveries claimed by one statement at most. */
const claimBatch = 32;

export interface LogoutDeliverySettings {
  /** Delays before each attempt (jittered as webhooks'); past the last, the delivery is exhausted. */
  retryScheduleMs: readonly number[];
  /** A 2xx must come within this. */
  timeoutMs: number;
  /** How often the loop looks for due deliveries when it found none. */
  pollMs: number;
  /** Attempts in flight from this instance at most. */
  maxInFlight: number;
}

/** Attempts finished by this instance, by outcome. */
export type LogoutAttemptCounts = Record<"delivered" | "failed" | "exhausted", number>;

/**
 * Sends the logout tokens of the outbox (Back-Channel Logout 1.0 section
 * 2.5): each is signed at its attempt (iat and exp from that moment, the
 * row's id as jti) and POSTed as `logout_token` in a form to the client's
 * backchannel_logout_uri, through the webhooks' sender (no redirects, one
 * deadline, and in production mode https only and never a loopback, private
 * or link-local address). A 2xx is delivered; anything else is tried again
 * on the schedule until it is exhausted. Rows are claimed with a lease, as
 * webhook deliveries are, so instances on one database never send the same
 * attempt twice, and one that dies leaves its lease to lapse.
 */
export class LogoutDeliveryLoop {
  readonly counts: LogoutAttemptCounts = { delivered: 0, failed: 0, exhausted: 0 };
  private readonly running = new Set<Promise<void>>();
  private readonly polling: PollingLoop;

  constructor(
    private readonly store: LogoutOutboxStore,
    private readonly clients: ClientLookup,
    private readonly keys: SigningKeys,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly settings: LogoutDeliverySettings,
    private readonly issuer: string,
    /** Told of what went wrong around an attempt (the database away): the loop goes on. */
    private readonly onError: (error: unknown) => void = () => undefined,
    private readonly random: () => number = Math.random,
  ) {
    this.polling = new PollingLoop(() => this.tick(), settings.pollMs, onError);
  }

  /** A lease outlasts an attempt's timeout, with room for the statements around it. */
  get leaseMs(): number {
    return 2 * this.settings.timeoutMs + 1000;
  }

  start(): void {
    this.polling.start();
  }

  /** Stops claiming and waits for the attempts in flight. */
  async stop(): Promise<void> {
    await this.polling.stop();
    await Promise.all([...this.running]);
  }

  /** Looks for due deliveries now (one was just queued here). */
  wake(): void {
    this.polling.wake();
  }

  /** Claims what this instance has room for; true when there may be more due at once. */
  async tick(): Promise<boolean> {
    const room = Math.min(this.settings.maxInFlight - this.running.size, claimBatch);
    if (room <= 0) return false;
    const claimed = await this.store.claimDue(this.clock(), this.leaseMs, room);
    for (const delivery of claimed) {
      const attempt = this.attempt(delivery)
        .catch((error: unknown) => this.onError(error))
        .finally(() => {
          this.running.delete(attempt);
          this.wake();
        });
      this.running.add(attempt);
    }
    return claimed.length === room;
  }

  private async attempt(delivery: ClaimedLogout): Promise<void> {
    const client = await this.clients.find(delivery.clientId);
    let result: LogoutAttemptResult;
    let delivered = false;
    let hopeless = false;
    if (!client?.backchannelLogoutUri) {
      // Removed, or its backchannel_logout_uri dropped, since the session ended: nobody to tell.
      result = { statusCode: null, error: "the client no longer has a backchannel_logout_uri" };
      hopeless = true;
    } else {
      const claims = logoutTokenClaims({ issuer: this.issuer, clientId: client.clientId, userId: delivery.userId, sid: delivery.sid, jti: delivery.id, now: this.clock() });
      const token = await signLogoutToken(this.keys, client.idTokenSignedResponseAlg, claims);
      const response = await this.sender.send({
        url: client.backchannelLogoutUri,
        headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": "shomei-backchannel-logout" },
        body: new URLSearchParams({ logout_token: token }).toString(),
      });
      result = "statusCode" in response ? { statusCode: response.statusCode, error: null } : { statusCode: null, error: response.error };
      delivered = result.statusCode !== null && isDelivered(result.statusCode);
    }
    const now = this.clock();
    const after: LogoutAfterAttempt = delivered ? { state: "delivered" } : afterFailure(this.settings.retryScheduleMs, delivery.attempts + 1, now, this.random, hopeless);
    if (!(await this.store.finishAttempt(delivery, result, after, now))) return;
    if (after.state === "delivered") this.counts.delivered++;
    else this.counts.failed++;
    if (after.state === "exhausted") this.counts.exhausted++;
  }
}

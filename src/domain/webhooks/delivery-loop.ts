import { PollingLoop } from "../outbox/polling-loop.ts";
import type { Clock } from "../clock.ts";
import { newId, newTimeOrderedId } from "../ids.ts";
import type {
  AfterAttempt,
  AttemptOutcome,
  ClaimedDelivery,
  EndpointAfterAttempt,
  OutboxStats,
  WebhookEndpoint,
  WebhookSender,
  WebhookStore,
} from "./model.ts";
import type { AccountEvent, WebhookNoticeData, WebhookNoticeType } from "../events/model.ts";
import { eventBody, eventSource } from "./payload.ts";
import { afterFailure, isDelivered } from "./retry-schedule.ts";
import { webhookHeaders } from "./signature.ts";
import type { WebhookEndpoints } from "./webhook-endpoints.ts";

/** Deliveries claimed by one statement at most. */
const claimBatch = 32;

export interface DeliverySettings {
  /** Delays before each attempt; past the last, the delivery is exhausted. */
  retryScheduleMs: readonly number[];
  /** A 2xx must come within this. */
  timeoutMs: number;
  /** How often the loop looks for due deliveries when it found none. */
  pollMs: number;
  /** Attempts in flight to one endpoint from this instance at most. */
  perEndpointConcurrency: number;
  /** Attempts in flight from this instance at most. */
  maxInFlight: number;
  /** An endpoint every attempt to which failed for this long is disabled. */
  disableAfterFailingMs: number;
}

/** Attempts finished by this instance, by outcome (metrics). */
export type AttemptCounts = Record<AttemptOutcome | "exhausted", number>;

/**
 * The delivery loop of one instance: claims due deliveries from the outbox
 * with a lease (so instances on one database never make the same attempt
 * twice), signs and sends each, and records the outcome: a 2xx is
 * delivered; anything else is retried on the schedule (with jitter) until
 * it is exhausted; 410 Gone disables the endpoint, and so does a run of
 * failures as long as disableAfterFailingMs. An instance that dies mid-
 * attempt leaves the lease to lapse and another instance sends again, with
 * the same webhook-id. A slow endpoint holds only its own slots.
 */
export class WebhookDeliveryLoop {
  readonly counts: AttemptCounts = { delivered: 0, failed: 0, gone: 0, exhausted: 0 };
  private readonly inFlight = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private readonly polling: PollingLoop;

  constructor(
    private readonly store: WebhookStore,
    private readonly endpoints: WebhookEndpoints,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly settings: DeliverySettings,
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

  /** The outbox's counts (metrics). */
  stats(): Promise<OutboxStats> {
    return this.store.stats();
  }

  /** Resolves when the attempts in flight now have finished. */
  async settled(): Promise<void> {
    await Promise.all([...this.running]);
  }

  /** Looks for due deliveries now (one was just queued here). */
  wake(): void {
    this.polling.wake();
  }

  /**
   * Claims what this instance has room for, each endpoint within its bound,
   * and starts those attempts; true when there may be more due at once (the
   * endpoints just filled are left out of the next claim, which finds the
   * others' deliveries).
   */
  async tick(): Promise<boolean> {
    const room = Math.min(this.settings.maxInFlight - this.running.size, claimBatch);
    if (room <= 0) return false;
    const claimed = await this.store.claimDue(this.clock(), this.leaseMs, room, { perEndpoint: this.settings.perEndpointConcurrency, inFlight: this.inFlight });
    if (!claimed.length) return false;
    const [endpoints, events] = await Promise.all([
      this.store.endpointsById(claimed.map((d) => d.endpointId)),
      this.store.recordedEvents(claimed.filter((d) => d.payload === null)),
    ]);
    for (const delivery of claimed) {
      this.inFlight.set(delivery.endpointId, (this.inFlight.get(delivery.endpointId) ?? 0) + 1);
      const attempt = this.attempt(delivery, endpoints.get(delivery.endpointId), this.body(delivery, events))
        .catch((error: unknown) => this.onError(error))
        .finally(() => {
          const left = (this.inFlight.get(delivery.endpointId) ?? 1) - 1;
          if (left) this.inFlight.set(delivery.endpointId, left);
          else this.inFlight.delete(delivery.endpointId);
          this.running.delete(attempt);
          // A slot came free: look again rather than wait for the next poll.
          this.wake();
        });
      this.running.add(attempt);
    }
    return this.running.size < this.settings.maxInFlight;
  }

  private async attempt(delivery: ClaimedDelivery, endpoint: WebhookEndpoint | undefined, body: string | undefined): Promise<void> {
    // Claimed deliveries are of enabled endpoints; one deleted or disabled since is left for later.
    if (!endpoint || endpoint.disabledAt !== null) return this.store.release([delivery]);
    const startedAt = this.clock();
    let response;
    if (body === undefined) {
      response = { error: "the event is no longer held (past retention)", durationMs: 0 };
    } else {
      const headers = webhookHeaders(this.endpoints.signingSecrets(endpoint, startedAt), delivery.eventId, Math.floor(startedAt / 1000), body);
      response = await this.sender.send({ url: endpoint.url, headers: { ...headers, "user-agent": "shomei-webhooks" }, body });
    }
    const outcome: AttemptOutcome =
      "statusCode" in response ? (isDelivered(response.statusCode) ? "delivered" : response.statusCode === 410 ? "gone" : "failed") : "failed";
    const now = this.clock();
    const after: AfterAttempt = outcome === "delivered" ? { state: "delivered" } : afterFailure(this.settings.retryScheduleMs, delivery.attempts + 1, now, this.random, body === undefined);
    const endpointAfter = this.endpointAfter(endpoint, outcome, now);
    const finished = await this.store.finishAttempt(
      delivery,
      {
        id: newId(),
        eventId: delivery.eventId,
        endpointId: delivery.endpointId,
        attempt: delivery.attempts + 1,
        outcome,
        statusCode: "statusCode" in response ? response.statusCode : null,
        error: "error" in response ? response.error : null,
        responseExcerpt: "excerpt" in response ? response.excerpt : null,
        startedAt,
        durationMs: response.durationMs,
      },
      after,
      endpointAfter,
      now,
    );
    if (!finished.recorded) return;
    this.counts[outcome]++;
    if (after.state === "exhausted") {
      this.counts.exhausted++;
      // A notice about a notice would echo between failing endpoints.
      if (!delivery.eventType.startsWith("webhook.")) {
        await this.notify(endpoint, "webhook.attempt_exhausted", { eventId: delivery.eventId, eventType: delivery.eventType }, now);
      }
    }
    if (finished.disabled && endpointAfter.kind === "disabled") {
      await this.notify(endpoint, "webhook.endpoint_disabled", { url: endpoint.url, reason: endpointAfter.reason }, now);
    }
  }

  /** A notice's or test's body was queued with it; a certificate event's is made from the recorded event. */
  private body(delivery: ClaimedDelivery, events: ReadonlyMap<string, AccountEvent>): string | undefined {
    if (delivery.payload !== null) return delivery.payload;
    const event = events.get(delivery.eventId);
    return event && eventBody(event, eventSource(this.issuer, delivery.accountId));
  }

  private endpointAfter(endpoint: WebhookEndpoint, outcome: AttemptOutcome, now: number): EndpointAfterAttempt {
    if (outcome === "delivered") return { kind: "healthy" };
    if (outcome === "gone") return { kind: "disabled", reason: "gone" };
    const since = endpoint.failingSince ?? now;
    return now - since >= this.settings.disableAfterFailingMs ? { kind: "disabled", reason: "failing" } : { kind: "failing", since };
  }

  /** A notice, recorded with the account's events and so sent to its other endpoints that take its type. */
  private async notify(about: WebhookEndpoint, type: WebhookNoticeType, data: Omit<WebhookNoticeData, "webhookEndpointId">, now: number): Promise<void> {
    await this.store.recordNotice({ id: newTimeOrderedId(now), accountId: about.accountId, type, data: { webhookEndpointId: about.id, ...data }, createdAt: now });
  }
}

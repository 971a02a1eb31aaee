import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { CrlListState } from "../domain/certificates/crl/crl-lists.ts";
import type { OcspResponderState } from "../domain/certificates/ocsp/ocsp-responses.ts";
import type { SweepCounts } from "../domain/certificates/ocsp/ocsp-sweep.ts";
import type { AttemptCounts } from "../domain/webhooks/delivery-loop.ts";
import type { LogoutAttemptCounts } from "../domain/oidc/backchannel-logout/delivery-loop.ts";
import type { OutboxStats } from "../domain/webhooks/model.ts";

type CrlLabel = "anchor" | "url";

/** Prometheus metrics of one server instance, on a registry of its own (tests run several servers per process). */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly duration: Histogram<"method" | "route">;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "shomei_" });
    this.requests = new Counter({
      name: "shomei_http_requests_total",
      help: "HTTP requests and RPCs served, by route and status",
      labelNames: ["method", "route", "status"],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: "shomei_http_request_duration_seconds",
      help: "Time from request to the end of the response, by route",
      labelNames: ["method", "route"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.duration.observe({ method, route }, seconds);
  }

  /**
   * Per-list CRL metrics, read from the lists' state when scraped. Labels:
   * the issuing anchor's id and the list's URL (both bounded by configuration).
   */
  watchCrlLists(snapshot: () => CrlListState[], now: () => number = Date.now): void {
    const registers = [this.registry];
    const labels = (s: CrlListState) => ({ anchor: s.issuerAnchor, url: s.url });
    const gauge = (name: string, help: string, value: (s: CrlListState) => number | undefined) =>
      new Gauge<CrlLabel>({
        name, help, labelNames: ["anchor", "url"], registers,
        collect() {
          this.reset();
          for (const s of snapshot()) {
            const v = value(s);
            if (v !== undefined) this.set(labels(s), v);
          }
        },
      });
    gauge("shomei_crl_age_seconds", "Seconds since the thisUpdate of the list held", (s) => s.list && (now() - s.list.thisUpdate) / 1000);
    gauge("shomei_crl_next_update_seconds", "Seconds to the nextUpdate of the list held (negative: past it, the list no longer answers)", (s) =>
      s.list?.nextUpdate === undefined ? undefined : (s.list.nextUpdate - now()) / 1000);
    gauge("shomei_crl_entries", "Revoked certificates listed in the list held", (s) => s.list?.entries);
    new Gauge<CrlLabel | "outcome">({
      name: "shomei_crl_last_refresh",
      help: "1 for the outcome of the last refresh: fetched, not_modified, from_database, recent, fetch_failed, rejected",
      labelNames: ["anchor", "url", "outcome"],
      registers,
      collect() {
        this.reset();
        for (const s of snapshot()) if (s.lastOutcome) this.set({ ...labels(s), outcome: s.lastOutcome }, 1);
      },
    });
    const counter = (name: string, help: string, value: (s: CrlListState) => number) =>
      new Counter<CrlLabel>({
        name, help, labelNames: ["anchor", "url"], registers,
        // The lists count for themselves; a scrape copies their counts.
        collect() {
          this.reset();
          for (const s of snapshot()) this.inc(labels(s), value(s));
        },
      });
    counter("shomei_crl_fetch_failures_total", "Refreshes that could not fetch the list (network, timeout, HTTP status, size)", (s) => s.fetchFailures);
    counter("shomei_crl_verification_failures_total", "Lists fetched and refused (signature, structure, crlNumber order, freshness)", (s) => s.verificationFailures);
  }

  /**
   * OCSP metrics, read from the source's counts when scraped: exchanges per
   * responder by outcome (labels: anchor id, responder URL, outcome), and
   * answers given from a stored response without asking.
   */
  watchOcsp(snapshot: () => { cachedAnswers: number; responders: OcspResponderState[] }): void {
    const registers = [this.registry];
    new Counter<"anchor" | "url" | "outcome">({
      name: "shomei_ocsp_requests_total",
      help: "Requests to OCSP responders by outcome: fetched (a response verified and used), fetch_failed (network, timeout, HTTP status, size), rejected (tryLater, error status, signature, signer, nonce, staleness)",
      labelNames: ["anchor", "url", "outcome"],
      registers,
      collect() {
        this.reset();
        for (const r of snapshot().responders) {
          for (const [outcome, n] of Object.entries(r.outcomes)) this.inc({ anchor: r.issuerAnchor, url: r.url, outcome }, n);
        }
      },
    });
    new Counter({
      name: "shomei_ocsp_cached_answers_total",
      help: "Checks answered from a stored OCSP response, without asking a responder",
      registers,
      collect() {
        this.reset();
        this.inc(snapshot().cachedAnswers);
      },
    });
  }

  /** The OCSP sweep of this instance: rounds run, certificates asked, changes found, certificates no responder answered. */
  watchOcspSweep(counts: Readonly<SweepCounts>): void {
    const counter = (name: string, help: string, value: (c: Readonly<SweepCounts>) => number) =>
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(value(counts));
        },
      });
    counter("shomei_ocsp_sweep_rounds_total", "OCSP sweep rounds this instance ran", (c) => c.rounds);
    counter("shomei_ocsp_sweep_asked_total", "Certificates the OCSP sweep asked a responder for", (c) => c.asked);
    counter("shomei_ocsp_sweep_changes_total", "Status changes the OCSP sweep recorded (each an event)", (c) => c.changes);
    counter("shomei_ocsp_sweep_failed_total", "Certificates no responder gave the OCSP sweep a usable answer for (asked again at the next round)", (c) => c.failed);
  }

  /** Back-Channel Logout: the logout token attempts this instance finished, by outcome. */
  watchLogoutDeliveries(counts: Readonly<LogoutAttemptCounts>): void {
    new Counter<"outcome">({
      name: "shomei_backchannel_logout_attempts_total",
      help: "Logout token attempts this instance finished, by outcome: delivered (2xx), failed (anything else); exhausted counts deliveries given up",
      labelNames: ["outcome"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [outcome, n] of Object.entries(counts)) this.inc({ outcome }, n);
      },
    });
  }

  /**
   * Events and webhooks: events recorded (on the database, by every
   * instance), this instance's attempts by outcome, and the outbox's depth
   * and the age of its oldest pending delivery (read from the database once
   * per scrape).
   */
  watchWebhooks(counts: Readonly<AttemptCounts>, stats: () => Promise<OutboxStats>, now: () => number = Date.now): void {
    const registers = [this.registry];
    let read: { at: number; stats: Promise<OutboxStats> } | undefined;
    // The three metrics below are collected in one scrape: one read serves them all.
    const current = () => {
      if (!read || now() - read.at > 1000) read = { at: now(), stats: stats() };
      return read.stats;
    };
    new Counter({
      name: "shomei_events_total",
      help: "Certificate events recorded on the database (by every instance)",
      registers,
      async collect() {
        this.reset();
        this.inc((await current()).eventsRecorded);
      },
    });
    new Counter<"outcome">({
      name: "shomei_webhook_attempts_total",
      help: "Webhook attempts this instance finished, by outcome: delivered (2xx), failed (another answer, timeout, connection), gone (410); exhausted counts deliveries whose schedule ran out",
      labelNames: ["outcome"],
      registers,
      collect() {
        this.reset();
        for (const [outcome, n] of Object.entries(counts)) this.inc({ outcome }, n);
      },
    });
    new Gauge({
      name: "shomei_webhook_queue_depth",
      help: "Deliveries waiting to be delivered (due now or retried later)",
      registers,
      async collect() {
        this.set((await current()).pending);
      },
    });
    new Gauge({
      name: "shomei_webhook_oldest_pending_seconds",
      help: "Age of the oldest delivery not yet delivered (0 when none waits)",
      registers,
      async collect() {
        const oldest = (await current()).oldestPendingAt;
        this.set(oldest === undefined ? 0 : (now() - oldest) / 1000);
      },
    });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

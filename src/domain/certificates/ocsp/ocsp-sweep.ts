import type { Clock } from "../../clock.ts";
import { DomainError } from "../../errors.ts";
import type { RegisteredBySerial } from "../crl/list-changes.ts";
import type { CertificateStore } from "../certificate-store.ts";
import { creationTime, type StoredCertificate } from "../model.ts";
import { statusRecord } from "../status-record.ts";
import type { OcspResponseKey } from "./ocsp-response-store.ts";
import type { OcspResponses } from "./ocsp-responses.ts";
import { ocspAnswer, type OcspRevocationSource } from "./ocsp-revocation-source.ts";
import type { OcspSweepQueue } from "./ocsp-sweep-queue.ts";
import type { RequestPace } from "./request-pace.ts";

export interface OcspSweepSettings {
  /** SHOMEI_OCSP_SWEEP: off asks nothing, whatever calls a round. */
  enabled: boolean;
  /** How old a certificate's last answer may be before it is asked again (never before the answer's nextUpdate). */
  intervalMs: number;
  /** Certificates claimed at once. */
  pageSize: number;
  /** How long a claim keeps other instances off its certificates: longer than asking for all of them takes. */
  leaseMs: number;
  /** SHOMEI_OCSP_SWEEP_PER_SECOND: requests per second, for all instances together. */
  perSecond: number;
}

/** What one round did, and whether more may be due at once. */
export interface SweepRound {
  /** Certificates a responder was asked for. */
  asked: number;
  /** Status records that changed a certificate's status (each records an event). */
  changes: number;
  /** Certificates no responder gave a usable answer for; due again at the next round. */
  failed: number;
  more: boolean;
}

/** Totals of this instance, for metrics. */
export interface SweepCounts {
  rounds: number;
  asked: number;
  changes: number;
  failed: number;
}

/**
 * Re-asks OCSP responders for registered certificates whose issuer has OCSP
 * and no CRL (a list records its changes itself, see ListChanges), so that
 * a revocation is recorded, with its event, without waiting for a check.
 * Each round claims the certificates due longest (a lease, so instances
 * sharing a database never ask for one at once; rounds take turns, so the
 * rate limit holds for them all), asks for each through the
 * same OCSP responses a check uses (the same verification, nonce and
 * freshness rules; never an answer from anything else), paced by the rate
 * limit, and writes for every account's registration what a check would:
 * a status record when the status differs from its newest one (its first
 * one too, so that a later change has a previous status), in the statement
 * whose trigger records the event. A certificate no responder answered for
 * is due again at once, behind those due longer: not a change, and retried
 * at the next round.
 */
export class OcspSweep {
  readonly counts: SweepCounts = { rounds: 0, asked: 0, changes: 0, failed: 0 };

  constructor(
    private readonly queue: OcspSweepQueue,
    private readonly registered: RegisteredBySerial,
    private readonly certificates: Pick<CertificateStore, "insertStatuses">,
    private readonly responses: OcspResponses,
    private readonly source: Pick<OcspRevocationSource, "target">,
    /** Whether the sweep asks for this certificate: its status comes from its issuer's OCSP responders alone. */
    private readonly sweeps: (certificate: StoredCertificate) => boolean,
    private readonly pace: RequestPace,
    private readonly settings: OcspSweepSettings,
    private readonly clock: Clock,
  ) {}

  async round(): Promise<SweepRound> {
    const round: SweepRound = { asked: 0, changes: 0, failed: 0, more: false };
    if (!this.settings.enabled) return round;
    const claimedAt = this.clock();
    const claim = await this.queue.claim(claimedAt, this.settings.pageSize, this.settings.leaseMs);
    this.counts.rounds++;
    try {
      for (const key of claim.keys) {
        const dueAt = await this.visit(key, round);
        await this.queue.reschedule(key, claim.leaseToken, dueAt);
      }
    } finally {
      // The turn goes back put off by the requests made, not by the certificates looked at (most need none); the
      // pace's next slot is waited for first, so that this instance's next claim finds the turn free.
      if (round.asked > 0) await this.pace.wait();
      await this.queue.endTurn(claim.leaseToken, claimedAt + (round.asked * 1000) / this.settings.perSecond);
    }
    round.more = claim.keys.length === this.settings.pageSize;
    return round;
  }

  /** Asks for one certificate and records what changed; returns when it is due next. */
  private async visit(key: OcspResponseKey, round: SweepRound): Promise<number> {
    const registrations = (await this.registered.findBySerials(key.issuerAnchor, [key.serialNumber])).filter((r) => this.sweeps(r.certificate));
    const now = this.clock();
    const first = registrations[0];
    // Another method answers for it (or nobody holds it now): looked at again after an interval, in case that changes.
    if (!first) return now + this.settings.intervalMs;
    const target = this.source.target(first.certificate);
    if (target instanceof DomainError) return now + this.settings.intervalMs;
    const { result, fetched, fetchedAt } = await this.responses.ask(target, now, now - this.settings.intervalMs, () => this.pace.wait());
    if (fetched) this.count("asked", round);
    if ("problem" in result) {
      this.count("failed", round);
      return this.clock();
    }
    const answer = ocspAnswer(result.response);
    const createdAt = creationTime(this.clock());
    const changed = registrations.filter((r) => r.status !== answer.status);
    if (changed.length) await this.certificates.insertStatuses(changed.map((r) => statusRecord(r.certificate, answer, createdAt)));
    for (const r of changed) if (r.status !== undefined) this.count("changes", round);
    return Math.max(fetchedAt + this.settings.intervalMs, result.response.nextUpdate ?? 0);
  }

  private count(what: "asked" | "changes" | "failed", round: SweepRound): void {
    this.counts[what]++;
    round[what]++;
  }
}

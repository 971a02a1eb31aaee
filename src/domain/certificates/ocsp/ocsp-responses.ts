import { randomBytes } from "node:crypto";
import type { Clock } from "../../clock.ts";
import { CertificateIdentity } from "./certificate-identity.ts";
import { OcspFetchError, type OcspFetcher } from "./ocsp-fetcher.ts";
import { loadOcspCodec, type OcspCodec } from "./ocsp-codec.ts";
import { responseKey, type OcspResponseKey, type OcspResponseStore, type StoredOcspResponse } from "./ocsp-response-store.ts";
import { checkNonce, notUsableAt, OcspRejectedError, usableUntil, type VerifiedOcspResponse } from "./verified-ocsp-response.ts";

/** A trust anchor as the OCSP source sees it. */
export interface OcspIssuer {
  /** The anchor id ("sha256:<fingerprint>"). */
  id: string;
  name: string;
  certificateDer: Uint8Array;
  /** Responders to ask instead of the ones the certificates name (trust anchors file, ocspUrls). */
  ocspUrls: readonly string[] | undefined;
}

export interface OcspSettings {
  /** One exchange with a responder, body included. */
  timeoutMs: number;
  /** Nonce length (RFC 8954); 0 sends none. */
  nonceBytes: number;
  /** How long a response without nextUpdate answers after its thisUpdate. */
  withoutNextUpdateMs: number;
}

/** A certificate to answer for, and the responders to ask, in order. */
export interface OcspTarget extends OcspResponseKey {
  issuer: OcspIssuer;
  urls: readonly string[];
}

export type OcspOutcome = "fetched" | "fetch_failed" | "rejected";

/** One exchange with a responder, for logs and metrics. It names no certificate. */
export interface OcspFetchReport {
  issuerAnchor: string;
  issuerName: string;
  url: string;
  outcome: OcspOutcome;
  /** Why it failed or was refused. */
  detail: string | undefined;
  durationMs: number;
}

/** Counts per responder, for metrics. */
export interface OcspResponderState {
  issuerAnchor: string;
  url: string;
  outcomes: Record<OcspOutcome, number>;
}

export type OcspResult = { response: VerifiedOcspResponse } | { problem: string };

/** Largest response read from a responder: one answer and a responder certificate or two. */
const maxResponseBytes = 256 * 1024;
/** Responders asked at once by one batch. */
const parallelFetches = 8;
/** Verified responses remembered by SHA-256, so a stored response is parsed and verified once per instance. */
const verifiedMemoSize = 10_000;

/**
 * OCSP responses for certificates of configured trust anchors: read from the
 * database the instances share, verified again by whoever reads them, and
 * fetched from a responder only when none stored can answer now. One fetch
 * per certificate at a time (single flight); a batch fetches what it lacks
 * in parallel, a few at a time.
 */
export class OcspResponses {
  private readonly identities = new Map<string, CertificateIdentity>();
  private readonly inFlight = new Map<string, Promise<OcspResult>>();
  private readonly verified = new Map<string, VerifiedOcspResponse>();
  private readonly responders = new Map<string, OcspResponderState>();
  private cachedAnswers = 0;
  private codec: OcspCodec | undefined;
  private readonly issuers: Map<string, OcspIssuer>;

  constructor(
    issuers: ReadonlyMap<string, OcspIssuer>,
    private readonly store: OcspResponseStore,
    private readonly fetcher: OcspFetcher,
    private readonly settings: OcspSettings,
    private readonly clock: Clock,
    private readonly onFetch: (report: OcspFetchReport) => void = () => undefined,
  ) {
    this.issuers = new Map(issuers);
  }

  /** An issuer known only once running (the mock CA, created on first use); an id already known is left as it is. */
  addIssuer(issuer: OcspIssuer): void {
    if (!this.issuers.has(issuer.id)) this.issuers.set(issuer.id, issuer);
  }

  /**
   * The issuer's answer for this certificate changed before the stored
   * response's nextUpdate (the mock CA, after SetMockCertificateStatus): the
   * stored response is dropped, for every instance, and the next check asks.
   */
  async forget(key: OcspResponseKey): Promise<void> {
    await this.inFlight.get(responseKey(key))?.catch(() => undefined);
    await this.store.forget(key);
  }

  issuer(anchorId: string | null): OcspIssuer | undefined {
    return anchorId === null ? undefined : this.issuers.get(anchorId);
  }

  /** One result per target, in order: one read of the database for all, then a fetch for each one that has no usable response. */
  async answers(targets: readonly OcspTarget[], now: number): Promise<OcspResult[]> {
    const codec = this.codec ?? (await this.loadCodec());
    const stored = await this.store.findMany(targets);
    const results: (OcspResult | undefined)[] = targets.map((target) => {
      const row = stored.get(responseKey(target));
      const response = row && this.fromStore(codec, target, row, now);
      if (!response) return undefined;
      this.cachedAnswers++;
      return { response };
    });
    const missing = results.flatMap((r, i) => (r === undefined ? [i] : []));
    await eachBounded(missing, parallelFetches, async (i) => {
      results[i] = await this.fetchOnce(targets[i]!);
    });
    return results as OcspResult[];
  }

  /**
   * The sweep's question for one certificate: the stored response when it
   * was fetched at fetchedSince or later and can answer now (a check asked
   * meanwhile), else a response fetched now, verified as a check's is.
   * `beforeRequest` is awaited before each request to a responder (the
   * sweep's rate limit).
   */
  async ask(
    target: OcspTarget,
    now: number,
    fetchedSince: number,
    beforeRequest: () => Promise<void>,
  ): Promise<{ result: OcspResult; fetched: boolean; fetchedAt: number }> {
    const codec = this.codec ?? (await this.loadCodec());
    const row = (await this.store.findMany([target])).get(responseKey(target));
    const recent = row && row.fetchedAt >= fetchedSince ? this.fromStore(codec, target, row, now) : undefined;
    if (row && recent) return { result: { response: recent }, fetched: false, fetchedAt: row.fetchedAt };
    return { result: await this.fetchOnce(target, beforeRequest), fetched: true, fetchedAt: now };
  }

  /** The OCSP codec, loaded at the first answer (see loadOcspCodec); kept here so later answers need no await for it. */
  private async loadCodec(): Promise<OcspCodec> {
    this.codec = await loadOcspCodec();
    return this.codec;
  }

  /** Answers from stored responses, and counts per responder, for metrics. */
  snapshot(): { cachedAnswers: number; responders: OcspResponderState[] } {
    return { cachedAnswers: this.cachedAnswers, responders: [...this.responders.values()].map((r) => ({ ...r, outcomes: { ...r.outcomes } })) };
  }

  /** A stored response, verified (once per instance) and usable now; undefined when it cannot answer. */
  private fromStore(codec: OcspCodec, target: OcspTarget, row: StoredOcspResponse, now: number): VerifiedOcspResponse | undefined {
    if (now >= row.usableUntil) return undefined;
    const memoKey = `${row.sha256} ${responseKey(target)}`;
    let response = this.verified.get(memoKey);
    if (!response) {
      try {
        response = codec.readOcspResponse(row.der, this.identity(target.issuer), target.serialNumber);
      } catch {
        return undefined; // not trusted more than the network: fetched again
      }
      this.remember(memoKey, response);
    }
    return notUsableAt(response, now, this.settings.withoutNextUpdateMs) ? undefined : response;
  }

  /** A fetch already running for the certificate (a check's, the sweep's) answers this one too. */
  private fetchOnce(target: OcspTarget, beforeRequest?: () => Promise<void>): Promise<OcspResult> {
    const key = responseKey(target);
    let running = this.inFlight.get(key);
    if (!running) {
      running = this.fetch(target, beforeRequest).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, running);
    }
    return running;
  }

  /** Asks each responder in turn until one gives a usable response; stores it for every instance. */
  private async fetch(target: OcspTarget, beforeRequest?: () => Promise<void>): Promise<OcspResult> {
    const codec = this.codec ?? (await this.loadCodec());
    const issuer = this.identity(target.issuer);
    const problems: string[] = [];
    for (const url of target.urls) {
      await beforeRequest?.();
      const started = this.clock();
      const nonce = this.settings.nonceBytes > 0 ? randomBytes(this.settings.nonceBytes) : undefined;
      const request = codec.ocspRequest(issuer, target.serialNumber, nonce);
      let outcome: OcspOutcome = "fetched";
      let detail: string | undefined;
      try {
        const der = await this.fetcher(url, request.der, { timeoutMs: this.settings.timeoutMs, maxBytes: maxResponseBytes });
        const response = codec.readOcspResponse(der, issuer, target.serialNumber);
        if (request.nonceValue) checkNonce(response, request.nonceValue);
        const now = this.clock();
        const why = notUsableAt(response, now, this.settings.withoutNextUpdateMs);
        if (why) throw new OcspRejectedError("not_current", `the response cannot answer now: ${why}`);
        this.remember(`${response.sha256} ${responseKey(target)}`, response);
        await this.store.save({
          issuerAnchor: target.issuerAnchor,
          serialNumber: target.serialNumber,
          url,
          der,
          sha256: response.sha256,
          producedAt: response.producedAt,
          thisUpdate: response.thisUpdate,
          nextUpdate: response.nextUpdate,
          usableUntil: usableUntil(response, this.settings.withoutNextUpdateMs),
          fetchedAt: now,
        });
        return { response };
      } catch (error) {
        if (error instanceof OcspRejectedError) {
          outcome = "rejected";
          detail = `${url}: response refused (${error.rejection}): ${error.message}`;
        } else if (error instanceof OcspFetchError) {
          outcome = "fetch_failed";
          detail = error.message;
        } else {
          throw error;
        }
        problems.push(detail);
      } finally {
        this.count(target.issuer, url, outcome);
        this.onFetch({ issuerAnchor: target.issuer.id, issuerName: target.issuer.name, url, outcome, detail, durationMs: this.clock() - started });
      }
    }
    return { problem: problems.join("; ") };
  }

  private identity(issuer: OcspIssuer): CertificateIdentity {
    let identity = this.identities.get(issuer.id);
    if (!identity) this.identities.set(issuer.id, (identity = new CertificateIdentity(issuer.certificateDer)));
    return identity;
  }

  private remember(key: string, response: VerifiedOcspResponse): void {
    if (this.verified.size >= verifiedMemoSize) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(key, response);
  }

  private count(issuer: OcspIssuer, url: string, outcome: OcspOutcome): void {
    const key = `${issuer.id} ${url}`;
    let state = this.responders.get(key);
    if (!state) this.responders.set(key, (state = { issuerAnchor: issuer.id, url, outcomes: { fetched: 0, fetch_failed: 0, rejected: 0 } }));
    state.outcomes[outcome]++;
  }
}

/** Runs work over items with at most `limit` running at once. */
async function eachBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

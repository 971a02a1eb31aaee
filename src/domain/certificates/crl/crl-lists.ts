import { createHash } from "node:crypto";
import { setImmediate } from "node:timers/promises";
import type { Clock } from "../../clock.ts";
import { isCurrent, isNewer, replacementRefusal } from "./crl-freshness.ts";
import type { CrlListKey, CrlListRecord, CrlListStore } from "./crl-list-store.ts";
import { CrlFetchError, type CrlFetcher } from "./crl-fetcher.ts";
import type { ListChanges, ListIssuer } from "./list-changes.ts";
import { CrlRejectedError, type CrlLoader, type VerifiedCrl } from "./verified-crl.ts";

/** A trust anchor as the CRL source sees it. */
export interface CrlIssuer {
  /** The anchor id ("sha256:<fingerprint>"). */
  id: string;
  name: string;
  certificateDer: Uint8Array;
  /** Lists to use instead of the certificates' distribution points (trust anchors file, crlUrls). */
  crlUrls: readonly string[] | undefined;
  /** The registered certificates its lists do not speak for, which a new list's changes skip (see ListIssuer). Absent: none. */
  notCoveredBy?: ListIssuer["notCoveredBy"];
}

export interface CrlSettings {
  fetchTimeoutMs: number;
  maxBytes: number;
  /** How often a list is asked for again (a conditional request), at most; sooner as nextUpdate nears. */
  refreshIntervalMs: number;
}

export type RefreshOutcome =
  | "fetched" // a new list, verified and in use
  | "not_modified" // the source answered 304, or the same bytes
  | "from_database" // another instance's newer list, verified and in use
  | "recent" // another instance confirmed the list recently: not asked again
  | "fetch_failed"
  | "rejected"; // fetched but refused: verification, crlNumber order, freshness

export interface RefreshReport extends CrlListKey {
  issuerName: string;
  outcome: RefreshOutcome;
  /** Why it failed or was refused. */
  detail: string | undefined;
  list: ListSummary | undefined;
  durationMs: number;
}

export interface ListSummary {
  thisUpdate: number;
  nextUpdate: number | undefined;
  crlNumber: bigint | undefined;
  entries: number;
  sha256: string;
}

/** One list as this instance holds it, for metrics. */
export interface CrlListState extends CrlListKey {
  issuerName: string;
  list: ListSummary | undefined;
  lastOutcome: RefreshOutcome | undefined;
  lastError: string | undefined;
  fetchFailures: number;
  verificationFailures: number;
}

interface HeldList {
  crl: VerifiedCrl;
  etag: string | undefined;
  lastModified: string | undefined;
}

class ListState {
  held: HeldList | undefined;
  /** The list held before its issuer re-issued it (see reissued): what the next list's changes are computed against. */
  reissuedFrom: VerifiedCrl | undefined;
  inFlight: Promise<void> | undefined;
  dueAt = 0;
  consecutiveFailures = 0;
  fetchFailures = 0;
  verificationFailures = 0;
  lastOutcome: RefreshOutcome | undefined;
  lastError: string | undefined;
  constructor(readonly issuer: CrlIssuer, readonly url: string) {}
}

const minGapMs = 10_000;
/** Saves tried while other instances store other lists of the same source at the same moment. */
const maxSaveAttempts = 3;
const tickMs = 5_000;

function summary(crl: VerifiedCrl): ListSummary {
  return { thisUpdate: crl.thisUpdate, nextUpdate: crl.nextUpdate, crlNumber: crl.crlNumber, entries: crl.entries, sha256: crl.sha256 };
}

class Refused extends Error {}

/**
 * The CRLs this instance holds, one per (issuer, URL): verified, kept in
 * step with the database that instances share, refreshed on a schedule
 * before nextUpdate and when a check finds a list stale. A list is replaced
 * only by one verified against its issuer that does not go backwards; until
 * then the previous one keeps answering. One refresh per list at a time.
 * The instance that stores a new list records, in the same transaction, the
 * status changes it brings to registered certificates (ListChanges).
 */
export class CrlLists {
  private readonly states = new Map<string, ListState>();
  private readonly issuers: Map<string, CrlIssuer>;
  private ticker: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(
    issuers: ReadonlyMap<string, CrlIssuer>,
    private readonly store: CrlListStore,
    private readonly fetcher: CrlFetcher,
    private readonly loader: CrlLoader,
    private readonly changes: ListChanges,
    private readonly settings: CrlSettings,
    private readonly clock: Clock,
    private readonly onRefresh: (report: RefreshReport) => void = () => undefined,
    private readonly random: () => number = Math.random,
  ) {
    this.issuers = new Map(issuers);
  }

  /** An issuer known only once running (the mock CA, created on first use); an id already known is left as it is. */
  addIssuer(issuer: CrlIssuer): void {
    if (!this.issuers.has(issuer.id)) this.issuers.set(issuer.id, issuer);
  }

  /**
   * The issuer says it has just re-issued this list, and the new one may be
   * dated before the one held (the mock CA, when a developer sets an earlier
   * sourceUpdatedAt): the list held here and in the database is dropped and
   * the list fetched now, so the next check answers from it. Production
   * issuers never get this: their lists only move forward.
   */
  async reissued(issuer: CrlIssuer, url: string): Promise<RefreshReport> {
    const state = this.state(issuer, url);
    await state.inFlight;
    state.reissuedFrom = state.held?.crl ?? state.reissuedFrom;
    state.held = undefined;
    state.consecutiveFailures = 0;
    await this.store.forget({ issuerAnchor: issuer.id, url });
    return this.refresh(issuer, url, true);
  }

  issuer(anchorId: string | null): CrlIssuer | undefined {
    return anchorId === null ? undefined : this.issuers.get(anchorId);
  }

  /**
   * The list to answer from at `now`, or why there is none. A list that is
   * not current is refreshed first (at most once per back-off period); one
   * that is current but due is refreshed in the background.
   */
  async current(issuer: CrlIssuer, url: string, now: number): Promise<{ crl: VerifiedCrl } | { problem: string }> {
    const state = this.state(issuer, url);
    if (!state.held || !isCurrent(state.held.crl, now)) {
      if (now >= state.dueAt) await this.refreshState(state, false);
    } else if (now >= state.dueAt && !state.inFlight) {
      void this.refreshState(state, false);
    }
    const held = state.held;
    if (held && isCurrent(held.crl, this.clock())) return { crl: held.crl };
    if (held) return { problem: `${url}: the list is not current (thisUpdate ${iso(held.crl.thisUpdate)}, nextUpdate ${iso(held.crl.nextUpdate)})${state.lastError ? `; ${state.lastError}` : ""}` };
    return { problem: state.lastError ?? `${url}: no list has been loaded yet` };
  }

  /**
   * Refreshes a list now, whatever its schedule. force (the default) asks the
   * source even when another instance confirmed the list moments ago; without
   * it, this is the scheduled refresh. Resolves when done, never rejects.
   */
  refresh(issuer: CrlIssuer, url: string, force = true): Promise<RefreshReport> {
    const state = this.state(issuer, url);
    let report: RefreshReport | undefined;
    return this.refreshState(state, force, (r) => (report = r)).then(() => report ?? this.lastReport(state));
  }

  /** Every list this instance knows of, for metrics. */
  snapshot(): CrlListState[] {
    return [...this.states.values()].map((s) => ({
      issuerAnchor: s.issuer.id,
      url: s.url,
      issuerName: s.issuer.name,
      list: s.held ? summary(s.held.crl) : undefined,
      lastOutcome: s.lastOutcome,
      lastError: s.lastError,
      fetchFailures: s.fetchFailures,
      verificationFailures: s.verificationFailures,
    }));
  }

  /** What the shared database holds, with the issuer's name when the issuer is configured here. */
  async stored(): Promise<(CrlListRecord & { issuerName: string | undefined })[]> {
    return (await this.store.list()).map((r) => ({ ...r, issuerName: this.issuers.get(r.issuerAnchor)?.name }));
  }

  /**
   * Refreshes due lists every few seconds, one at a time (a large list takes
   * memory while it loads); first the lists the database knows of, so a
   * restarted instance has them before the first check asks.
   */
  async start(): Promise<void> {
    for (const record of await this.store.list()) {
      const issuer = this.issuers.get(record.issuerAnchor);
      if (issuer) this.state(issuer, record.url);
    }
    this.ticker = setInterval(() => {
      this.ticking ??= this.tick().finally(() => (this.ticking = undefined));
    }, tickMs);
    this.ticker.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.ticker);
    this.ticker = undefined;
    await this.ticking;
    await Promise.all([...this.states.values()].map((s) => s.inFlight ?? Promise.resolve()));
  }

  private async tick(): Promise<void> {
    for (const state of this.states.values()) {
      if (!this.ticker) return;
      if (this.clock() >= state.dueAt) await this.refreshState(state, false);
    }
  }

  private state(issuer: CrlIssuer, url: string): ListState {
    const key = `${issuer.id} ${url}`;
    let state = this.states.get(key);
    if (!state) this.states.set(key, (state = new ListState(issuer, url)));
    return state;
  }

  /** Single flight: a refresh in progress is joined, not repeated. Never throws. */
  private refreshState(state: ListState, force: boolean, report?: (r: RefreshReport) => void): Promise<void> {
    if (!state.inFlight) {
      state.inFlight = this.run(state, force)
        .then((r) => {
          report?.(r);
          this.onRefresh(r);
        })
        .finally(() => (state.inFlight = undefined));
    } else if (report) {
      return state.inFlight.then(() => report(this.lastReport(state)));
    }
    return state.inFlight;
  }

  private lastReport(state: ListState): RefreshReport {
    return {
      issuerAnchor: state.issuer.id,
      url: state.url,
      issuerName: state.issuer.name,
      outcome: state.lastOutcome ?? "fetch_failed",
      detail: state.lastError,
      list: state.held ? summary(state.held.crl) : undefined,
      durationMs: 0,
    };
  }

  private async run(state: ListState, force: boolean): Promise<RefreshReport> {
    const started = this.clock();
    const key: CrlListKey = { issuerAnchor: state.issuer.id, url: state.url };
    let outcome: RefreshOutcome;
    let detail: string | undefined;
    try {
      outcome = await this.synchronize(state, key, force);
      state.consecutiveFailures = 0;
      state.lastError = undefined;
    } catch (error) {
      const rejected = error instanceof CrlRejectedError || error instanceof Refused;
      outcome = rejected ? "rejected" : "fetch_failed";
      detail = error instanceof CrlRejectedError ? `${state.url}: list refused (${error.rejection}): ${error.message}` : errorText(error);
      if (rejected) state.verificationFailures++;
      else state.fetchFailures++;
      state.consecutiveFailures++;
      state.lastError = detail;
      await this.store.recordError(key, detail.slice(0, 1024), this.clock()).catch(() => undefined);
    }
    state.lastOutcome = outcome;
    state.dueAt = this.nextDue(state);
    const finished = this.clock();
    return {
      ...key,
      issuerName: state.issuer.name,
      outcome,
      detail,
      list: state.held ? summary(state.held.crl) : undefined,
      durationMs: finished - started,
    };
  }

  /** Brings the held list up to date with the database and then the source. Throws on failure. */
  private async synchronize(state: ListState, key: CrlListKey, force: boolean): Promise<RefreshOutcome> {
    const record = await this.store.find(key);
    let adopted = false;
    if (record && (await this.adoptStored(state, key, record))) adopted = true;
    const now = this.clock();
    const held = state.held;
    const confirmedRecently =
      record?.checkedAt !== undefined && record.sha256 === held?.crl.sha256 && now - record.checkedAt < this.settings.refreshIntervalMs / 2;
    if (!force && held && isCurrent(held.crl, now) && confirmedRecently) return adopted ? "from_database" : "recent";

    const result = await this.fetcher(state.url, held ? { etag: held.etag, lastModified: held.lastModified } : {}, {
      timeoutMs: this.settings.fetchTimeoutMs,
      maxBytes: this.settings.maxBytes,
    });
    if (result.kind === "not_modified") {
      await this.store.markChecked(key, held!.crl.sha256, this.clock(), held!.etag, held!.lastModified);
      return "not_modified";
    }
    // The same bytes again (a source without ETag or Last-Modified): known by their hash, without
    // parsing, verifying and indexing the whole list once more.
    if (held && (await sha256Hex(result.der)) === held.crl.sha256) {
      state.held = { crl: held.crl, etag: result.etag, lastModified: result.lastModified };
      await this.store.markChecked(key, held.crl.sha256, this.clock(), result.etag, result.lastModified);
      return "not_modified";
    }
    const crl = await this.loader(result.der, state.issuer.certificateDer);
    for (let attempt = 1; ; attempt++) {
      const held = state.held?.crl;
      const refusal = replacementRefusal(held, crl, this.clock());
      if (refusal) throw new Refused(`${state.url}: list refused: ${refusal}`);
      const base = held ?? state.reissuedFrom;
      const statusRecords = base ? await this.changes.records(state.issuer, state.url, base, crl) : [];
      const stored = await this.store.saveList({
        ...key,
        replacing: held?.sha256,
        statusRecords,
        der: result.der,
        sha256: crl.sha256,
        etag: result.etag,
        lastModified: result.lastModified,
        thisUpdate: crl.thisUpdate,
        nextUpdate: crl.nextUpdate,
        crlNumber: crl.crlNumber,
        entries: crl.entries,
        at: this.clock(),
      });
      if (stored) {
        state.held = { crl, etag: result.etag, lastModified: result.lastModified };
        state.reissuedFrom = undefined;
        return "fetched";
      }
      // Another instance stored another list meanwhile, and recorded its changes: that list is the one
      // this one replaces (its changes computed again against it), or the list itself when newer.
      const newer = await this.store.find(key);
      if (!newer || !(await this.adoptStored(state, key, newer))) throw new Refused(`${state.url}: list refused: the database holds a newer list`);
      if (attempt === maxSaveAttempts || !isNewer(crl, state.held!.crl)) return "from_database";
    }
  }

  /** Loads the database's list when it is newer than the one held; true when it was adopted. */
  private async adoptStored(state: ListState, key: CrlListKey, record: CrlListRecord): Promise<boolean> {
    if (record.sha256 === undefined || record.sha256 === state.held?.crl.sha256) return false;
    if (state.held && record.thisUpdate !== undefined && !isNewer({ thisUpdate: record.thisUpdate, crlNumber: record.crlNumber }, state.held.crl)) return false;
    const der = await this.store.der(key, record.sha256);
    if (!der) return false;
    const crl = await this.loader(der, state.issuer.certificateDer);
    const refusal = replacementRefusal(state.held?.crl, crl, this.clock());
    if (refusal) throw new Refused(`${state.url}: the database's list refused: ${refusal}`);
    state.held = { crl, etag: record.etag, lastModified: record.lastModified };
    return true;
  }

  /**
   * After a success: within the refresh interval, and by half the time left
   * to nextUpdate when that is sooner, so a new list is in hand before the
   * old one lapses. After a failure (or while the list is not current): a
   * back-off doubling from 10 s. Jitter of ±10% spreads instances apart.
   */
  private nextDue(state: ListState): number {
    const now = this.clock();
    const interval = this.settings.refreshIntervalMs;
    const held = state.held?.crl;
    let wait: number;
    if (state.consecutiveFailures > 0 || !held || !isCurrent(held, now)) {
      wait = Math.min(interval, minGapMs * 2 ** Math.min(Math.max(state.consecutiveFailures - 1, 0), 16));
    } else {
      wait = Math.min(interval, Math.max(minGapMs, (held.nextUpdate! - now) / 2));
    }
    return now + Math.round(wait * (0.9 + 0.2 * this.random()));
  }
}

function iso(ms: number | undefined): string {
  return ms === undefined ? "none" : new Date(ms).toISOString();
}

function errorText(error: unknown): string {
  if (error instanceof CrlFetchError || error instanceof Refused) return error.message;
  return `refresh failed: ${(error as Error)?.message ?? String(error)}`;
}

/**
 * Lists run to tens of megabytes: one is hashed a slice at a time, the event
 * loop turning between slices. webcrypto's digest, though it returns a
 * promise, held the loop for the whole list (40 MB: about half a second on a
 * busy 2-core machine; node:crypto's hash of one slice, a few milliseconds).
 */
const hashSlice = 4 * 1024 * 1024;

/** SHA-256 of a list, hex. */
async function sha256Hex(der: Uint8Array): Promise<string> {
  const hash = createHash("sha256");
  for (let offset = 0; offset < der.byteLength; offset += hashSlice) {
    if (offset > 0) await setImmediate();
    hash.update(der.subarray(offset, offset + hashSlice));
  }
  return hash.digest("hex");
}

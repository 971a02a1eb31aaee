/** The small arithmetic of the benchmarks, kept pure so it can be tested. */

/** The middle value (the lower middle of an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** The p-th percentile (0 < p <= 100) by the nearest-rank method; NaN for none. */
export function percentile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
}

/** How far a key's rounds lie apart: (largest - smallest) / median; 0 for fewer than two. */
export function spread(values: readonly number[]): number {
  if (values.length < 2) return 0;
  return (Math.max(...values) - Math.min(...values)) / median(values);
}

/**
 * How far a key's median may lie from where more rounds would put it: the
 * standard error of the median of `values`, over the median. The rounds'
 * spread is taken from their interquartile range (over 1.349, the standard
 * deviation of a normal spread with that range), which one wild round does
 * not move as it moves the standard deviation; the median's error is 1.2533
 * times the mean's (sd / √n). Infinity for fewer than three rounds.
 */
export function medianError(values: readonly number[]): number {
  const n = values.length;
  if (n < 3) return Number.POSITIVE_INFINITY;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => {
    const position = q * (n - 1);
    const below = Math.floor(position);
    return sorted[below]! + (sorted[Math.min(n - 1, below + 1)]! - sorted[below]!) * (position - below);
  };
  const sd = (at(0.75) - at(0.25)) / 1.349;
  return (1.2533 * sd) / Math.sqrt(n) / median(values);
}

/**
 * Whether a key takes more rounds: while its median's error (medianError)
 * is above `target` and it has had fewer than `maxRounds`. Two runs whose
 * medians each lie within 4 % of where they tend agree within 10 % nine
 * times in ten (1.645 × √2 × 4 % ≈ 9.3 %).
 */
export function needsMoreRounds(ratios: readonly number[], target: number, maxRounds: number): boolean {
  return ratios.length < maxRounds && medianError(ratios) > target;
}

/**
 * The run's time for extra rounds (needsMoreRounds), `total` seconds over
 * `keys` keys: each key's share is handed out as it starts, so what a
 * steady key leaves goes to the next. A pair of rounds lasts longer than a
 * key's share, so a key may take one on credit, which the next shares
 * repay: the run goes over `total` by one pair at most.
 */
export class ExtraRoundTime {
  private left = 0;

  constructor(
    private readonly total: number,
    private readonly keys: number,
  ) {}

  /** A key starts: its share joins what the keys before it left (or owe). */
  startKey(): void {
    this.left += this.total / this.keys;
  }

  /** Whether a pair of rounds expected to last `seconds` may run; if so, its time is spent. */
  takePair(seconds: number): boolean {
    if (this.left <= 0) return false;
    this.left -= seconds;
    return true;
  }
}

/** A ratio rounded to three decimals, as the summary line reports it. */
export function roundRatio(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** A warm-up's slices are compared two at a time: their mean CPU per answer. */
const warmUpWindow = 2;
/** The pair the last two slices are compared with starts this many slices before them. */
const warmUpLookBack = 4;
/**
 * How far above the lowest level seen (its own, or another process's) a
 * warm-up may end: closer than that, slices of a quarter second are within
 * each other's noise.
 */
const warmUpReach = 1.25;

/** The mean CPU per answer of the `warmUpWindow` slices from `from` (Infinity where a slice had no answers). */
function windowMean(cpuPerUnit: readonly number[], from: number): number {
  return cpuPerUnit.slice(from, from + warmUpWindow).reduce((a, b) => a + b, 0) / warmUpWindow;
}

/**
 * Whether a process's warm-up can end, from its server's CPU time per
 * answer in each of the warm-up's slices so far (oldest first): once the
 * mean of the last two slices is no more than `tolerance` below the mean of
 * the pair `warmUpLookBack` slices before them, its CPU per answer has
 * stopped falling, unless it stands more than `warmUpReach` times the
 * lowest such mean seen before (a slow stretch of the machine, not a steady
 * state) or `reference`, the level another process of the same server
 * reached on the same path. A fresh process spends more CPU per answer for
 * seconds while V8 compiles its hot paths and its caches fill, for 2 to 8 s
 * depending on the path (docs/bench-method.md, Warm-up), sometimes in
 * steps with a level stretch between them: comparing with slices a while
 * back, not the ones just before, keeps a short level stretch or one slice's
 * noise from ending it, and the other process's level keeps a level stretch
 * at the start, which no earlier slice can tell from the end, from ending it.
 */
export function warmedUp(cpuPerUnit: readonly number[], reference = Number.POSITIVE_INFINITY, tolerance = 0.05): boolean {
  const n = cpuPerUnit.length;
  if (n < warmUpWindow + warmUpLookBack) return false;
  const mean = (from: number) => windowMean(cpuPerUnit, from);
  const later = mean(n - warmUpWindow);
  let lowest = reference;
  for (let from = 0; from + 2 * warmUpWindow <= n; from++) lowest = Math.min(lowest, mean(from));
  // A slice without answers (Infinity) says nothing of steadiness yet.
  return Number.isFinite(later) && later >= (1 - tolerance) * mean(n - warmUpWindow - warmUpLookBack) && later <= warmUpReach * lowest;
}

/** Where a warm-up ended: the mean CPU per answer of its last two slices. */
export function warmLevel(cpuPerUnit: readonly number[]): number {
  return cpuPerUnit.length < warmUpWindow ? Number.POSITIVE_INFINITY : windowMean(cpuPerUnit, cpuPerUnit.length - warmUpWindow);
}

/**
 * The processes of one server whose warm-up ended above `warmUpReach` times
 * the lowest level another of them reached: still cold, in a level stretch
 * their own slices could not tell from the end (indexes into `levels`).
 */
export function stillCold(levels: readonly number[]): number[] {
  const best = Math.min(...levels);
  return levels.flatMap((level, i) => (level > warmUpReach * best ? [i] : []));
}

/** One compared path of a run: its ratios, undefined where it failed. */
export interface KeyResult {
  name: string;
  ratio: number | undefined;
  cpuRatio: number | undefined;
  spread: number | undefined;
}

/**
 * The one JSON line a script reads: every key's ratio, CPU ratio and spread,
 * rounded, in the order given (a key that could not be measured is null), the
 * mode the keys were measured in, and the run's plain measures (rates, times)
 * as they are.
 */
export function summaryLine(mode: string, keys: readonly KeyResult[], measures: Record<string, number | null>): string {
  const rounded = (value: (k: KeyResult) => number | undefined) =>
    Object.fromEntries(keys.map((k) => [k.name, value(k) === undefined || !Number.isFinite(value(k)) ? null : roundRatio(value(k)!)]));
  return JSON.stringify({ mode, ratios: rounded((k) => k.ratio), cpuRatios: rounded((k) => k.cpuRatio), spread: rounded((k) => k.spread), measures });
}

/**
 * The order in which the two sides (0 and 1) take their slices in a round:
 * `count` pairs, ABBA ABBA… starting with `first`, so that each side runs
 * first in as many pairs as it runs second and a steady drift of the
 * machine's speed over the round falls on both alike.
 */
export function sliceOrder(count: number, first: 0 | 1): (0 | 1)[] {
  const second: 0 | 1 = first === 0 ? 1 : 0;
  return Array.from({ length: count }, (_, k): (0 | 1)[] => (k % 2 === 0 ? [first, second] : [second, first])).flat();
}

/** What one slice of load gave: answers that counted, the seconds it ran, and CPU and latency beside them. */
export interface SliceResult {
  ok: number;
  failed: number;
  seconds: number;
  p99: number;
  rssMb: number;
  /** The server's CPU time during the slice, ms. */
  cpuMs: number;
  /** PostgreSQL's CPU time during the slice, ms (NaN when not measured). */
  databaseCpuMs: number;
}

/**
 * A side's slices of one round as one measurement, counting `per` units
 * per answer (ids of a batch): answers and times summed, the rate over the
 * seconds the slices ran, CPU per unit in µs, the highest resident memory,
 * and the median of the slices' p99 (a slice reports only its own
 * percentiles).
 */
export function combineSlices(slices: readonly SliceResult[], per = 1): SliceResult & { rate: number; cpuUs: number; databaseCpuUs: number } {
  const sum = (f: (m: SliceResult) => number) => slices.reduce((total, m) => total + f(m), 0);
  const ok = sum((m) => m.ok);
  const units = ok * per;
  const perUnit = (ms: number) => (units > 0 ? (ms * 1000) / units : Number.NaN);
  const seconds = sum((m) => m.seconds);
  const cpuMs = sum((m) => m.cpuMs);
  const databaseCpuMs = sum((m) => m.databaseCpuMs);
  return {
    ok,
    failed: sum((m) => m.failed),
    seconds,
    rate: seconds > 0 ? units / seconds : Number.NaN,
    p99: median(slices.map((m) => m.p99)),
    rssMb: slices.length === 0 ? Number.NaN : Math.max(...slices.map((m) => m.rssMb)),
    cpuMs,
    databaseCpuMs,
    cpuUs: perUnit(cpuMs),
    databaseCpuUs: perUnit(databaseCpuMs),
  };
}

/** One round's process of each side (an index into its processes) and the side that starts. */
export interface RoundPlan {
  processes: [number, number];
  first: 0 | 1;
}

/**
 * Which process of each side answers in each of `rounds` rounds, and which
 * side starts: the processes in turn (a side of fewer processes wraps
 * sooner), and the side that starts changing after every full turn of the
 * larger side's processes, so that each process starts as often as it
 * follows, with any count of processes (with an even count, alternating by
 * round would let a process always start).
 */
export function roundPlan(rounds: number, processes: readonly [number, number]): RoundPlan[] {
  const turn = Math.max(1, ...processes);
  return Array.from({ length: rounds }, (_, round) => ({
    processes: [round % Math.max(1, processes[0]), round % Math.max(1, processes[1])],
    first: Math.floor(round / turn) % 2 === 0 ? 0 : 1,
  }));
}

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

/** A ratio rounded to three decimals, as the summary line reports it. */
export function roundRatio(value: number): number {
  return Math.round(value * 1000) / 1000;
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

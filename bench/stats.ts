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

/** A ratio rounded to three decimals, as the summary line reports it. */
export function roundRatio(value: number): number {
  return Math.round(value * 1000) / 1000;
}

type Ratios = ReadonlyArray<readonly [string, number | undefined]>;

/**
 * The one JSON line a script reads: every ratio measured, rounded, in the
 * order given; a path that was not run is left out, one that could not be
 * measured is null. With `cpuRatios`, the CPU ratios beside them, the same
 * way, under "cpuRatios".
 */
export function ratiosLine(ratios: Ratios, cpuRatios?: Ratios): string {
  const rounded = (pairs: Ratios) => {
    const out: Record<string, number | null> = {};
    for (const [key, value] of pairs) out[key] = value === undefined || !Number.isFinite(value) ? null : roundRatio(value);
    return out;
  };
  return JSON.stringify(cpuRatios ? { ratios: rounded(ratios), cpuRatios: rounded(cpuRatios) } : { ratios: rounded(ratios) });
}

import { describe, expect, it } from "vitest";
import { CookieJar } from "../../bench/oidc-session.ts";
import { cpuTimeMs, postgresCpuSpentMs } from "../../bench/load/proc.ts";
import { combineSlices, ExtraRoundTime, median, medianError, needsMoreRounds, percentile, roundPlan, sliceOrder, spread, stillCold, summaryLine, warmedUp, warmLevel, type SliceResult } from "../../bench/stats.ts";

describe("benchmark arithmetic", () => {
  it("takes the median of an odd count, the lower middle of an even one, NaN of none", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([0.9, 0.3, 0.5, 0.7])).toBe(0.5);
    expect(median([4])).toBe(4);
    expect(median([])).toBeNaN();
  });

  it("ends a warm-up once the CPU per answer of the last two slices is within 5 % of two slices a while before", () => {
    expect(warmedUp([200, 190, 205, 198, 201])).toBe(false);
    expect(warmedUp([200, 190, 205, 198, 201, 195])).toBe(true);
    // A fresh shomei process on PostgreSQL, measured in 0.5 s slices, then level: it ends at its thirteenth slice.
    const fresh = [953, 961, 719, 468, 298, 297, 270, 232, 169, 187, 208, 190, 195];
    expect(fresh.findIndex((_, i) => warmedUp(fresh.slice(0, i + 1)))).toBe(12);
    // A fresh Verify process, measured: level for two slices (3,895 and 4,000) in the middle of its fall.
    expect(warmedUp([85_000, 6275, 3895, 4000, 5068, 3585])).toBe(false);
    // Higher than before: a slow stretch, not a steady state (a fresh SQLite process, measured on a slow afternoon).
    expect(warmedUp([1612, 1195, 2147, 1373, 2000, 2100])).toBe(false);
    expect(warmedUp([1612, 1195, 2147, 1373, 1010, 990, 1000, 995])).toBe(false);
    expect(warmedUp([1612, 1195, 2147, 1373, 1010, 990, 1000, 995, 1005, 990])).toBe(true);
    // A slice without answers says nothing yet.
    expect(warmedUp([200, 200, 200, 200, Infinity, Infinity])).toBe(false);
    expect(warmedUp([Infinity, Infinity, 200, 210, 205, 200])).toBe(false);
    expect(warmedUp([Infinity, Infinity, 200, 210, 205, 200, 204, 201])).toBe(true);
  });

  it("keeps a process warming while it stands well above the level another process of its server reached", () => {
    // A fresh shomei process on PostgreSQL, measured: level at 1.8 s, then falling to about 500 µs; its sibling had reached 537.
    const levelAtFirst = [1551, 1107, 1758, 1185, 966, 1754];
    expect(warmedUp(levelAtFirst)).toBe(true);
    expect(warmedUp(levelAtFirst, 537)).toBe(false);
    const later = [...levelAtFirst, 912, 821, 640, 610, 600, 605, 610, 600];
    expect(warmedUp(later, 537)).toBe(true);
    expect(warmedUp(later)).toBe(true);
    // Level again, but a third above the other process: not yet.
    expect(warmedUp([...levelAtFirst, 912, 821, 720, 710, 700, 705, 710, 700], 537)).toBe(false);
  });

  it("names the processes whose warm-up ended more than a quarter above another's level", () => {
    expect(warmLevel([900, 500, 480])).toBe(490);
    expect(warmLevel([480])).toBe(Infinity);
    expect(stillCold([1230, 537])).toEqual([0]);
    expect(stillCold([537, 1230, 600])).toEqual([1]);
    expect(stillCold([537, 650])).toEqual([]);
    expect(stillCold([500])).toEqual([]);
  });

  it("does not reorder the values it is given", () => {
    const values = [3, 1, 2];
    median(values);
    expect(values).toEqual([3, 1, 2]);
  });

  it("takes percentiles by nearest rank", () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 99)).toBeNaN();
  });

  it("writes one JSON line: the mode, rounded ratios, CPU ratios and spreads, null where a path failed, in the order given, and the measures", () => {
    const line = summaryLine(
      "production",
      [
        { name: "check_sqlite_vs_connect", ratio: 0.33349, cpuRatio: 2.00049, spread: 0.0812 },
        { name: "batch_vs_single", ratio: 24.1234, cpuRatio: Number.NaN, spread: 0 },
        { name: "par_pg_vs_oidc_provider", ratio: undefined, cpuRatio: undefined, spread: undefined },
      ],
      { startup_ms: 412, batch_pg_certificates_per_second: null },
    );
    expect(line).toBe(
      '{"mode":"production","ratios":{"check_sqlite_vs_connect":0.333,"batch_vs_single":24.123,"par_pg_vs_oidc_provider":null},' +
        '"cpuRatios":{"check_sqlite_vs_connect":2,"batch_vs_single":null,"par_pg_vs_oidc_provider":null},' +
        '"spread":{"check_sqlite_vs_connect":0.081,"batch_vs_single":0,"par_pg_vs_oidc_provider":null},' +
        '"measures":{"startup_ms":412,"batch_pg_certificates_per_second":null}}',
    );
    expect(summaryLine("production", [], {})).toBe('{"mode":"production","ratios":{},"cpuRatios":{},"spread":{},"measures":{}}');
  });

  it("measures a key's spread as the distance of its extreme rounds over their median", () => {
    expect(spread([1.0, 1.1, 0.9])).toBeCloseTo(0.2);
    expect(spread([2, 2, 2])).toBe(0);
    expect(spread([1.5])).toBe(0);
  });

  it("tells how far a key's median may lie from where more rounds would put it, unmoved by one wild round", () => {
    // Quartiles 0.95 and 1.05 of five rounds: sd 0.1 / 1.349, the median's error 1.2533 × that / √5, over the median 1.
    expect(medianError([0.9, 0.95, 1, 1.05, 1.1])).toBeCloseTo((1.2533 * (0.1 / 1.349)) / Math.sqrt(5), 6);
    // One round far off moves the extreme, not the quartiles.
    expect(medianError([0.9, 0.95, 1, 1.05, 3])).toBeCloseTo(medianError([0.9, 0.95, 1, 1.05, 1.1]), 6);
    // Relative: the same rounds at twice the ratio have the same error.
    expect(medianError([1.8, 1.9, 2, 2.1, 2.2])).toBeCloseTo(medianError([0.9, 0.95, 1, 1.05, 1.1]), 6);
    // More rounds of the same spread: a smaller error.
    expect(medianError([0.9, 0.95, 1, 1.05, 1.1, 0.9, 0.95, 1, 1.05, 1.1])).toBeLessThan(medianError([0.9, 0.95, 1, 1.05, 1.1]));
    expect(medianError([1, 1, 1])).toBe(0);
    expect(medianError([1, 2])).toBe(Number.POSITIVE_INFINITY);
  });

  it("gives a key more rounds while its median is unsure, up to its most", () => {
    const wide = [0.7, 0.85, 0.8, 1.0, 0.9];
    const narrow = [1.44, 1.46, 1.45, 1.47, 1.43];
    expect(needsMoreRounds(wide, 0.04, 11)).toBe(true);
    expect(needsMoreRounds(narrow, 0.04, 11)).toBe(false);
    expect(needsMoreRounds([...wide, 0.85, 0.84, 0.86, 0.85, 0.86, 0.84], 0.04, 11)).toBe(false);
    expect(needsMoreRounds(wide, 0.04, 5)).toBe(false);
  });

  it("hands out the run's time for extra rounds key by key, lends one pair and takes it back from the next shares", () => {
    const time = new ExtraRoundTime(12, 3);
    // Nothing before a key starts.
    expect(time.takePair(1)).toBe(false);
    time.startKey(); // 4 s
    expect(time.takePair(5)).toBe(true); // on credit: -1
    expect(time.takePair(5)).toBe(false);
    time.startKey(); // 3 s
    expect(time.takePair(2)).toBe(true); // 1
    expect(time.takePair(2)).toBe(true); // -1
    expect(time.takePair(2)).toBe(false);
    time.startKey(); // 3 s: what the last key had, nothing more
    expect(time.takePair(3)).toBe(true);
    expect(time.takePair(3)).toBe(false);
    // 15 s spent of 12: over by less than one pair.
  });

  it("orders a round's slices ABBA from the side named first, each side first as often as second", () => {
    expect(sliceOrder(3, 0)).toEqual([0, 1, 1, 0, 0, 1]);
    expect(sliceOrder(4, 1)).toEqual([1, 0, 0, 1, 1, 0, 0, 1]);
    expect(sliceOrder(1, 1)).toEqual([1, 0]);
    // A drift that grows by one each slice costs both sides the same over an even count of pairs.
    const positions = (side: 0 | 1) => sliceOrder(4, 0).flatMap((s, at) => (s === side ? [at] : []));
    expect(positions(0).reduce((a, b) => a + b)).toBe(positions(1).reduce((a, b) => a + b));
  });

  it("adds a side's slices into one round: rates over the seconds they ran, CPU per unit, the top memory, the median p99", () => {
    const slice = (ok: number, seconds: number, cpuMs: number, p99: number, rssMb: number): SliceResult => ({ ok, failed: 0, seconds, cpuMs, p99, rssMb, databaseCpuMs: Number.NaN });
    const round = combineSlices([slice(1000, 1.02, 100, 12, 200), slice(1200, 0.98, 110, 30, 230), slice(800, 1, 90, 15, 210)]);
    expect(round.ok).toBe(3000);
    expect(round.seconds).toBeCloseTo(3);
    expect(round.rate).toBeCloseTo(1000);
    expect(round.cpuUs).toBeCloseTo(100); // 300 ms over 3,000 answers
    expect(round.p99).toBe(15);
    expect(round.rssMb).toBe(230);
    expect(round.databaseCpuUs).toBeNaN();
    // A batch answer counts its ids.
    const batch = combineSlices([{ ...slice(10, 1, 50, 200, 300), databaseCpuMs: 20 }], 1000);
    expect(batch.rate).toBe(10_000);
    expect(batch.cpuUs).toBeCloseTo(5);
    expect(batch.databaseCpuUs).toBeCloseTo(2);
    // No answer: no rate per unit to speak of.
    expect(combineSlices([slice(0, 1, 10, 0, 100)]).cpuUs).toBeNaN();
  });

  it("gives each process of a side its share of the rounds, starting as often as it follows, with any count of processes", () => {
    for (const [counts, rounds] of [[[3, 3], 6], [[2, 2], 8], [[3, 1], 6], [[1, 1], 4], [[4, 1], 16]] as const) {
      const plan = roundPlan(rounds, counts);
      expect(plan).toHaveLength(rounds);
      for (const side of [0, 1] as const) {
        for (let p = 0; p < counts[side]; p++) {
          const mine = plan.filter((r) => r.processes[side] === p);
          expect(mine).toHaveLength(rounds / counts[side]);
          // As many rounds with this side first as with it second, on each of its processes.
          expect(mine.filter((r) => r.first === side).length * 2).toBe(mine.length);
        }
      }
    }
    // Turns of the processes in order; the starting side changes after a full turn.
    expect(roundPlan(6, [3, 3])).toEqual([0, 1, 2, 0, 1, 2].map((p, i) => ({ processes: [p, p], first: i < 3 ? 0 : 1 })));
    // Alternating by round, two processes would each always start or always follow.
    expect(roundPlan(4, [2, 2]).map((r) => r.first)).toEqual([0, 0, 1, 1]);
  });

  it("counts PostgreSQL's CPU process by process: a backend that ended in between takes nothing off, a new one counts from its start", () => {
    const before = new Map([[101, 100], [102, 500], [103, 40]]);
    const after = new Map([[101, 130], [103, 45], [104, 20]]);
    // 30 + 5 + 20; subtracting the totals (195 - 640) would give -445.
    expect(postgresCpuSpentMs(before, after)).toBe(55);
    expect(postgresCpuSpentMs(new Map(), new Map())).toBe(0);
  });

  it("reads a process's CPU time from /proc, and it grows while the process works", () => {
    const before = cpuTimeMs(process.pid);
    expect(Number.isFinite(before)).toBe(true);
    // Work until the kernel has counted 50 ms more (its clock ticks are 10 ms), however busy the machine.
    let now = before;
    let spin = 0;
    const deadline = performance.now() + 30_000;
    while (now - before < 50 && performance.now() < deadline) {
      for (let i = 0; i < 100_000; i++) spin += Math.sqrt(spin + i);
      now = cpuTimeMs(process.pid);
    }
    expect(spin).toBeGreaterThan(0);
    expect(now - before).toBeGreaterThanOrEqual(50);
    expect(cpuTimeMs(2 ** 30)).toBeNaN();
  });
});

describe("the sign-in cookie jar", () => {
  const response = (...cookies: string[]) => {
    const headers = new Headers();
    for (const cookie of cookies) headers.append("set-cookie", cookie);
    return new Response(null, { headers });
  };

  it("sends a cookie only under its path, and forgets one that is cleared", () => {
    const jar = new CookieJar();
    jar.store(response("_session=abc; path=/; httponly", "_interaction=x1; path=/interaction/x1", "old=1; path=/"));
    expect(jar.header("/auth")).toBe("_session=abc; old=1");
    expect(jar.header("/interaction/x1")).toBe("_session=abc; _interaction=x1; old=1");
    jar.store(response("old=; path=/; max-age=0", "_session=def; path=/", "gone=1; expires=Thu, 01 Jan 1970 00:00:00 GMT"));
    expect(jar.header("/auth")).toBe("_session=def");
  });
});

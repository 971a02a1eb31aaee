import { describe, expect, it } from "vitest";
import { CookieJar } from "../../bench/oidc-session.ts";
import { cpuTimeMs } from "../../bench/load/client.ts";
import { median, percentile, spread, summaryLine } from "../../bench/stats.ts";

describe("benchmark arithmetic", () => {
  it("takes the median of an odd count, the lower middle of an even one, NaN of none", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([0.9, 0.3, 0.5, 0.7])).toBe(0.5);
    expect(median([4])).toBe(4);
    expect(median([])).toBeNaN();
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

/**
 * shomei side by side with what a user would pick instead, in one run:
 * CheckCertificateStatus against a bare connect-node server answering the
 * same message (Connect JSON and gRPC, SQLite and PostgreSQL), PAR,
 * authorize with consent skipped and the refresh_token grant against
 * node-oidc-provider 9, BatchCheckCertificateStatus against single calls, and
 * a history of 1,000,000 status records against one of 10,000. Every server
 * and the load generator run in processes of their own. Each comparison runs
 * its two sides for 5 rounds, more while its median is unsure (needsMoreRounds
 * in stats.ts), each process warmed up first (until its
 * CPU per answer stops falling: bench/load/warm-up.ts); the two servers
 * loaded at once and taking turns of a tenth of a second on their CPU
 * (bench/load/turns.ts), each round on another of a server's processes
 * (BENCH_PROCESSES), and keeps the median of the per-round ratios; the
 * measured servers run on a CPU of their own (bench/cpus.ts); p99 latency,
 * the peak resident
 * memory and the CPU time per request of each server are reported beside it.
 * shomei runs in production mode with the run's CA as trust anchor
 * (bench/servers/bench-ca.ts); check_mock_sqlite_vs_connect alone is measured
 * in mock mode. Ends with the start-up time and one JSON line
 * `{"mode":"production","ratios":{…},"cpuRatios":{…},"spread":{…},"measures":{…}}`
 * (see docs/performance.md; the method, docs/bench-method.md).
 */
import { pinningLine } from "./cpus.ts";
import { connections, loadGenerator, processesPerServer, type Instance } from "./harness.ts";
import type { LoadJob } from "./load/job.ts";
import type { Measurement } from "./load/client.ts";
import { comparison, comparisonNames, needs, type ComparisonName, type Side } from "./comparisons.ts";
import { Servers } from "./servers/pool.ts";
import { measureStartup, type Startup } from "./startup.ts";
import { combineSlices, ExtraRoundTime, median, medianError, needsMoreRounds, roundPlan, sliceOrder, spread, stillCold, summaryLine, warmLevel, type RoundPlan } from "./stats.ts";

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
/**
 * A key whose median is still unsure after its `rounds` (medianError above
 * BENCH_MEDIAN_ERROR) takes more, up to BENCH_MAX_ROUNDS, while the run's
 * time for extra rounds lasts (BENCH_EXTRA_SECONDS in all: ExtraRoundTime),
 * so that the run stays within its ten minutes.
 */
const maxRounds = Math.max(rounds, Number(process.env.BENCH_MAX_ROUNDS ?? 11));
const medianErrorTarget = Number(process.env.BENCH_MEDIAN_ERROR ?? 0.04);
const extraSeconds = Number(process.env.BENCH_EXTRA_SECONDS ?? 60);
/** Load each side gets in a round (the scenario benchmarks' BENCH_SECONDS is the length of a scenario). */
const seconds = Number(process.env.BENCH_SECONDS ?? 1);
/** How long each server of a round runs before the other takes its turn (BENCH_TURN_MS; 0: slices instead, as for one process). */
const turnMs = Number(process.env.BENCH_TURN_MS ?? 100);
/** A slice of a round whose two sides are one process (BENCH_SLICE_SECONDS). */
const sliceSeconds = Number(process.env.BENCH_SLICE_SECONDS ?? 1);
/** The longest a process's warm-up may last; it ends sooner once the process is warm (warmedUp in stats.ts). */
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 7);
/** How often a warm-up reads its server's CPU time per answer. */
const warmupSliceMs = 250;
/**
 * The shortest first warm-up of a process on a request (BENCH_FRESH_WARMUP_SECONDS): a
 * fresh process can hold one level for its first seconds before its CPU per
 * answer falls, on both processes of a server at once, so that neither its
 * own readings nor the other process's level tell it from warm.
 */
const freshWarmupSeconds = Number(process.env.BENCH_FRESH_WARMUP_SECONDS ?? 4);
/**
 * What this run has warmed before, by process and request (warmedOn): a
 * process's later warm-ups on the same request need no minimum. One warmed
 * on another request still gets it: Verify on PostgreSQL, on processes the
 * check had warmed, once ended its warm-ups at 3.3 and 4.6 s still falling
 * and answered at twice its usual CPU in every round.
 */
const warmedBefore = new Set<string>();

/** A warm-up's process and request: the pid, the protocol and the request's path. */
function warmedOn(pid: number, job: LoadJob): string {
  return `${pid} ${job.protocol} ${job.protocol === "grpc" ? job.path : new URL(job.url).pathname}`;
}
/**
 * Uncounted running time each side gets at the start of its process pair's
 * first round: on this machine a process idle for more than about five
 * seconds (as each is while the others warm up) runs slower for its first
 * half second back (docs/bench-method.md, Idle processes start slow).
 */
const firstSettleMs = Number(process.env.BENCH_SETTLE_MS ?? 500);
/** BENCH_VERBOSE=1: each side's figures of every round, not only the rounds' ratios. */
const verbose = process.env.BENCH_VERBOSE === "1";

interface Row {
  name: ComparisonName;
  title: string;
  labels: [string, string];
  unit: string;
  ratio: number;
  ratios: number[];
  rate: [number, number];
  p99: [number, number];
  rssMb: [number, number];
  /** Server CPU time per unit (request, or id of a batch), µs, median over the rounds. */
  cpuUs: [number, number];
  /** The compared side's CPU per unit over shomei's, median of the rounds' (above 1: shomei spends less). */
  cpuRatio: number;
  /** PostgreSQL's CPU per unit while each side ran, µs, median over the rounds (NaN: the key does not use PostgreSQL). */
  databaseCpuUs: [number, number];
  error?: string;
}

/** A side's job against one of its processes, `secondsToRun` long. */
async function jobFor(side: Side, instance: Instance, secondsToRun: number): Promise<LoadJob> {
  return { ...(await side.job(instance)), seconds: secondsToRun, connections: side.connections ?? connections } as LoadJob;
}

/** One stretch of load on one process of a side, as the load generator and /proc saw it. */
async function load(side: Side, instance: Instance, secondsToRun: number, withPostgres: boolean): Promise<Measurement> {
  return (await loadGenerator()).measure(await jobFor(side, instance, secondsToRun), instance.pid, withPostgres);
}

/**
 * One round, on one process of each side (`plan`, from roundPlan). Two
 * processes take turns of `turnMs` on the servers' CPU, both loaded the
 * whole round (bench/load/turns.ts), until each has had `secondsEach`
 * (BENCH_SECONDS, times the comparison's roundScale): the machine's speed
 * drifts by tens of per cent within a second (docs/bench-method.md), and
 * turns that short put both sides in the same stretch of it. Two sides on
 * one process (batch against single calls on PostgreSQL) cannot take
 * turns: they take slices of `sliceSeconds` in turn instead, each slice
 * with its own connections, until each has had `secondsEach` or more in
 * whole slices (sliceOrder: ABBA…, from the side the plan says starts;
 * at least two a side, so that a drift falls on both alike).
 */
async function measureRound(sides: readonly [Side, Side], plan: RoundPlan, withPostgres: boolean, settleMs: number, secondsEach: number): Promise<[Measured, Measured]> {
  const instances = [sides[0].instances[plan.processes[0]]!, sides[1].instances[plan.processes[1]]!] as const;
  if (turnMs > 0 && instances[0].pid !== instances[1].pid) {
    const jobs: [LoadJob, LoadJob] = [await jobFor(sides[0], instances[0], secondsEach), await jobFor(sides[1], instances[1], secondsEach)];
    const measured = await (await loadGenerator()).measureInTurns({ jobs, pids: [instances[0].pid, instances[1].pid], first: plan.first, turnMs, withPostgres, settleMs });
    return [combineSlices([measured[0]], sides[0].per), combineSlices([measured[1]], sides[1].per)];
  }
  const slices: [Measurement[], Measurement[]] = [[], []];
  for (const i of sliceOrder(Math.max(2, Math.ceil(secondsEach / sliceSeconds)), plan.first)) {
    slices[i].push(await load(sides[i], instances[i], sliceSeconds, withPostgres));
  }
  return [combineSlices(slices[0], sides[0].per), combineSlices(slices[1], sides[1].per)];
}

/** A side's round: its rate, its server's CPU per unit, and PostgreSQL's where the key uses it (NaN otherwise). */
type Measured = ReturnType<typeof combineSlices>;

/**
 * Another checkout whose build the run measures in place of each key's
 * peer (BENCH_BASELINE=<path>, its dependencies installed and `npm run
 * build` run there): this checkout's shomei side of every key against the
 * same side of that build, alternating in one run. Comparing two builds
 * by two runs of their own is lost in this machine's noise; within one
 * run, a change of 5 % shows.
 */
const baselineRoot = process.env.BENCH_BASELINE;

/**
 * Warms each process of a side (warmedUp in stats.ts), each against the
 * lowest level the ones before it reached, then once more any that ended
 * still cold beside the others (stillCold): on a noisy machine a fresh
 * process can hold one level for its first seconds, which its own slices
 * cannot tell from the end.
 */
async function warmUpSide(side: Side): Promise<void> {
  const levels: number[] = [];
  const warm = async (i: number, reference: number, again = false) => {
    const instance = side.instances[i]!;
    const job = await jobFor(side, instance, warmupSeconds);
    const request = warmedOn(instance.pid, job);
    const minSeconds = warmedBefore.has(request) ? 0 : Math.min(freshWarmupSeconds, warmupSeconds);
    warmedBefore.add(request);
    const result = await (await loadGenerator()).warmUp({
      job,
      pid: instance.pid,
      sliceMs: warmupSliceMs,
      minSeconds,
      maxSeconds: warmupSeconds,
      ...(Number.isFinite(reference) ? { reference } : {}),
    });
    levels[i] = warmLevel(result.cpuUsPerAnswer);
    if (verbose) console.log(`  warm-up ${side.label} (process ${i + 1}${again ? ", again" : ""}): ${result.seconds.toFixed(1)} s, CPU µs per answer ${result.cpuUsPerAnswer.map((us) => us.toFixed(0)).join(" ")}`);
  };
  for (let i = 0; i < side.instances.length; i++) await warm(i, Math.min(...levels));
  for (const i of stillCold(levels)) await warm(i, Math.min(...levels.filter((_, other) => other !== i)), true);
}

async function run(name: ComparisonName, servers: Servers, baseline: Servers | undefined, extraTime: ExtraRoundTime): Promise<Row> {
  extraTime.startKey();
  const c = await comparison(name, servers);
  if (baseline) c.peer = { ...(await comparison(name, baseline)).shomei, label: "baseline" };
  const sides: [Side, Side] = [c.shomei, c.peer];
  // PostgreSQL's processes share the machine: their CPU is what a check on PostgreSQL costs beside shomei's own.
  const withPostgres = needs[name].includes("postgres");
  for (const side of sides) await warmUpSide(side);
  const results: [Measured[], Measured[]] = [[], []];
  const plans = roundPlan(maxRounds, [sides[0].instances.length, sides[1].instances.length]);
  const ratiosSoFar = () => results[0].map((ours, i) => ours.rate / results[1][i]!.rate);
  let lastRoundSeconds = 0;
  for (const [round, plan] of plans.entries()) {
    // Extra rounds come two at a time: one on each pair of processes, and an odd count keeps one middle round.
    if (round >= rounds && (round - rounds) % 2 === 0) {
      const another = needsMoreRounds(ratiosSoFar(), medianErrorTarget, maxRounds - 1) && extraTime.takePair(2 * lastRoundSeconds);
      if (!another) break;
    }
    const roundStarted = performance.now();
    // A pair's first round follows the other processes' warm-ups, long enough idle to start slow; its later rounds follow one round of the other pair.
    const firstOfPair = plans.findIndex((p) => p.processes[0] === plan.processes[0] && p.processes[1] === plan.processes[1]) === round;
    const measured = await measureRound(sides, plan, withPostgres, firstOfPair ? firstSettleMs : 0, seconds * (c.roundScale ?? 1));
    lastRoundSeconds = (performance.now() - roundStarted) / 1000;
    if (verbose) console.log(`  round ${round + 1} took ${lastRoundSeconds.toFixed(2)} s`);
    for (const i of [0, 1] as const) {
      const m = measured[i];
      results[i].push(m);
      if (verbose) console.log(`  round ${round + 1} ${sides[i].label} (process ${plan.processes[i] + 1}): ${m.rate.toFixed(0)} /s, CPU ${m.cpuUs.toFixed(1)} µs, p99 ${m.p99.toFixed(1)} ms`);
    }
  }
  const ratios = ratiosSoFar();
  const cpuRatios = results[0].map((ours, i) => results[1][i]!.cpuUs / ours.cpuUs);
  const pick = (f: (m: Measured) => number): [number, number] => [median(results[0].map(f)), median(results[1].map(f))];
  return {
    name,
    title: c.title,
    labels: [c.shomei.label, c.peer.label],
    unit: c.shomei.unit ?? "req/s",
    ratio: median(ratios),
    ratios,
    rate: pick((m) => m.rate),
    p99: pick((m) => m.p99),
    rssMb: pick((m) => m.rssMb),
    cpuUs: pick((m) => m.cpuUs),
    cpuRatio: median(cpuRatios.filter(Number.isFinite)),
    databaseCpuUs: pick((m) => m.databaseCpuUs),
  };
}

function printTable(rows: Row[]): void {
  const header = ["key", "path", "shomei side", "compared with", "rate (median)", "ratio", "median ±", "rounds", "spread", "p99 ms", "RSS MB", "CPU µs/unit", "CPU ratio", "PostgreSQL µs/unit"];
  const f = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : "-");
  const cells = rows.map((r) =>
    r.error
      ? [r.name, r.title, "", "", "", "failed", "", "", "", "", "", "", "", ""]
      : [
          r.name,
          r.title,
          r.labels[0],
          r.labels[1],
          `${f(r.rate[0])} vs ${f(r.rate[1])} ${r.unit}`,
          `${r.ratio.toFixed(3)}x`,
          `${(medianError(r.ratios) * 100).toFixed(1)}%`,
          r.ratios.map((x) => x.toFixed(2)).join(" "),
          `${(spread(r.ratios) * 100).toFixed(0)}%`,
          `${f(r.p99[0], 1)} vs ${f(r.p99[1], 1)}`,
          `${f(r.rssMb[0])} vs ${f(r.rssMb[1])}`,
          `${f(r.cpuUs[0], 1)} vs ${f(r.cpuUs[1], 1)}`,
          Number.isFinite(r.cpuRatio) ? `${r.cpuRatio.toFixed(3)}x` : "-",
          Number.isFinite(r.databaseCpuUs[0]) ? `${f(r.databaseCpuUs[0], 1)} vs ${f(r.databaseCpuUs[1], 1)}` : "-",
        ],
  );
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  for (const row of [header, ...cells]) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd());
  for (const r of rows) if (r.error) console.log(`\n${r.name} failed: ${r.error}`);
}

/** Plain measures of the run: the batch rates, and start-up when measured. */
function measures(rows: Row[], startup: Startup | undefined): Record<string, number | null> {
  const batchRate = (name: ComparisonName) => {
    const row = rows.find((r) => r.name === name && !r.error);
    return row ? Math.round(row.rate[0]) : null;
  };
  return {
    batch_certificates_per_second: batchRate("batch_vs_single"),
    batch_pg_certificates_per_second: batchRate("batch_vs_single_pg"),
    ...(startup ? { startup_ms: Math.round(startup.ms), startup_rss_mb: Math.round(startup.rssMb) } : {}),
  };
}

/** Runs the named comparisons in the order of `comparisonNames` (and, with `startup`, the start-up time); prints the table and the JSON line. */
export async function runComparisons(selected: ReadonlySet<ComparisonName>, withStartup: boolean): Promise<boolean> {
  const names = comparisonNames.filter((name) => selected.has(name));
  console.log(
    `${connections} connections, ${rounds} rounds of ${seconds} s per side (up to ${maxRounds} while a key's median is unsure by more than ${(medianErrorTarget * 100).toFixed(0)} %, ${extraSeconds} s of extra rounds in all), ${turnMs > 0 ? `the two servers taking turns of ${turnMs} ms (slices of ${sliceSeconds} s where both sides are one process)` : `in slices of ${sliceSeconds} s`}, ${processesPerServer} processes per server taking the rounds in turn, ` +
      `each process warmed up until its CPU per answer stops falling (at most ${warmupSeconds} s); ${pinningLine()}\n`,
  );
  if (baselineRoot) console.log(`every key against the build in ${baselineRoot} (BENCH_BASELINE), not against its peer\n`);
  const servers = new Servers();
  const baseline = baselineRoot ? new Servers(baselineRoot, servers) : undefined;
  const rows: Row[] = [];
  const extraTime = new ExtraRoundTime(extraSeconds, names.length);
  let startup: Startup | undefined;
  try {
    // First, before any load: after one, PostgreSQL's autovacuum and checkpoints and the finished servers' exits
    // share the machine with the starts (at the end of a run they took 547-652 ms, alone 517-552).
    if (withStartup && !baseline) {
      startup = await measureStartup(await servers.ca());
      console.log(`startup_ms: ${startup.ms.toFixed(0)} ms to a ready /healthz (median of ${startup.runs.map((t) => t.toFixed(0)).join(", ")}), ${startup.rssMb.toFixed(0)} MB resident`);
    }
    for (const [i, name] of names.entries()) {
      const started = performance.now();
      try {
        const row = await run(name, servers, baseline, extraTime);
        rows.push(row);
        console.log(
          `${name}: ${row.ratio.toFixed(3)}x ± ${(medianError(row.ratios) * 100).toFixed(1)} % (rounds ${row.ratios.map((x) => x.toFixed(3)).join(", ")}) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
        );
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        rows.push({ name, title: name, labels: ["", ""], unit: "", ratio: Number.NaN, ratios: [], rate: [0, 0], p99: [0, 0], rssMb: [0, 0], cpuUs: [0, 0], cpuRatio: Number.NaN, databaseCpuUs: [Number.NaN, Number.NaN], error: message });
        console.log(`${name}: failed: ${message}`);
      }
      // One key after another, its rounds together: a process left idle for a minute between two rounds of its key came
      // back slower than its warm-up had left it (docs/bench-method.md, Rounds).
      const later = new Set(names.slice(i + 1).flatMap((next) => needs[next]));
      await baseline?.stopAllBut(later);
      await servers.stopAllBut(later);
    }
  } finally {
    await baseline?.close();
    await servers.close();
  }
  console.log("");
  printTable(rows);
  console.log("");
  const keys = rows.map((r) => (r.error ? { name: r.name, ratio: undefined, cpuRatio: undefined, spread: undefined } : { name: r.name, ratio: r.ratio, cpuRatio: r.cpuRatio, spread: spread(r.ratios) }));
  // Every key is measured in production mode but check_mock_sqlite_vs_connect, which says so in its name.
  console.log(summaryLine(baseline ? "production, against the baseline build" : "production", keys, measures(rows, startup)));
  return rows.every((r) => !r.error);
}

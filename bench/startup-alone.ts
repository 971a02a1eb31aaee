/**
 * `npm run bench -- startup`: the start-up measure of the full run alone
 * (bench/startup.ts: production mode, a migrated SQLite database, to a ready
 * /healthz), over more starts than the full run takes, for a change that
 * touches what the server loads. Ends with one JSON line:
 *
 *   {"startup":{"ms":…,"rssMb":…,"runs":[…]}}
 */
import { BenchCa } from "./servers/bench-ca.ts";
import { measureStartup } from "./startup.ts";

const runs = Number(process.env.BENCH_STARTUP_RUNS ?? 11);
const ca = new BenchCa();
await ca.start(1);
try {
  const startup = await measureStartup(ca, runs);
  console.log(`startup_ms: ${startup.ms.toFixed(0)} ms to a ready /healthz (median of ${runs}), ${startup.rssMb.toFixed(0)} MB resident; target <= 500`);
  console.log(JSON.stringify({ startup: { ms: Math.round(startup.ms), rssMb: Math.round(startup.rssMb), runs: startup.runs.map(Math.round) } }));
} finally {
  await ca.stop();
}

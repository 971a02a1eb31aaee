/**
 * Runs the benchmarks named on the command line, or every comparison when
 * none is named:
 *
 *   npm run bench                                  # every comparison (bench/compare.ts) and start-up, the table and the JSON line
 *   npm run bench -- check_sqlite_vs_connect refresh_vs_oidc_provider   # some of them
 *   npm run bench -- crl       # loading a 1,000,000-entry CRL against openssl (bench/crl.ts)
 *   npm run bench -- events    # events from a new 1,000,000-entry CRL against a 1,000,000-certificate registry (bench/events.ts)
 *   npm run bench -- ocsp      # a cached OCSP answer and a CRL lookup in production mode (bench/ocsp.ts)
 *   npm run bench -- http      # the paths no comparison covers, against a bare node:http handler (bench/http.ts)
 *   npm run bench -- startup   # start-up alone, median of 11 starts (bench/startup-alone.ts)
 */
import { runComparisons } from "./compare.ts";
import { comparisonNames, type ComparisonName } from "./comparisons.ts";
import { stopLoadGenerator } from "./harness.ts";

const others: Record<string, () => Promise<unknown>> = {
  crl: () => import("./crl.ts"),
  events: () => import("./events.ts"),
  ocsp: () => import("./ocsp.ts"),
  http: () => import("./http.ts"),
  startup: () => import("./startup-alone.ts"),
};
const isComparison = (name: string): name is ComparisonName => (comparisonNames as readonly string[]).includes(name);

const names = process.argv.slice(2);
const unknown = names.filter((name) => !isComparison(name) && !Object.hasOwn(others, name));
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(", ")}; available: ${[...comparisonNames, ...Object.keys(others)].join(", ")}`);
  process.exit(2);
}
const comparisons = new Set(names.length > 0 ? names.filter(isComparison) : comparisonNames);
let ok = true;
try {
  for (const name of names.filter((n) => !isComparison(n))) await others[name]!();
  if (comparisons.size > 0) ok = await runComparisons(comparisons, names.length === 0);
} finally {
  await stopLoadGenerator();
}
process.exitCode = ok ? 0 : 1;

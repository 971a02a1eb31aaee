/**
 * Runs the benchmarks named on the command line, or the HTTP one when none is:
 *
 *   npm run bench              # HTTP throughput of the main paths (bench/http.ts)
 *   npm run bench -- crl       # loading a 1,000,000-entry CRL against openssl (bench/crl.ts)
 *   npm run bench -- ocsp      # a cached OCSP answer and a CRL lookup in production mode (bench/ocsp.ts)
 */
const benchmarks: Record<string, () => Promise<unknown>> = {
  http: () => import("./http.ts"),
  crl: () => import("./crl.ts"),
  ocsp: () => import("./ocsp.ts"),
};

const names = process.argv.slice(2);
const unknown = names.filter((name) => !Object.hasOwn(benchmarks, name));
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(", ")}; available: ${Object.keys(benchmarks).join(", ")}`);
  process.exit(2);
}
for (const name of names.length > 0 ? names : ["http"]) await benchmarks[name]!();

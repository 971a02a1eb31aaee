import { spawnSync } from "node:child_process";

/**
 * Before any test: build the server into dist/ (esbuild, a few seconds), so
 * the tests that run the `shomei` command (bin/shomei.js runs the build) test
 * the sources as they are, however the tests were started.
 */
export default function build(): void {
  const result = spawnSync(process.execPath, ["scripts/build.mjs"], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`npm run build failed:\n${result.stdout}${result.stderr}`);
}

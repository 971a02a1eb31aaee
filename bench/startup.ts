/**
 * Start-up: from `node bin/shomei.js serve` to the first 200 from /healthz,
 * in production mode on an SQLite database that is already migrated (an
 * operator's restart), the median of five starts, and the process's resident
 * memory once it answers.
 */
import { spawn, spawnSync } from "node:child_process";
import path from "node:path";
import { freePort } from "../test/support/openssl-ocsp.ts";
import { onEveryCpu } from "./cpus.ts";
import { stopProcess, temporaryDirectory } from "./harness.ts";
import { residentMb } from "./load/proc.ts";
import type { BenchCa } from "./servers/bench-ca.ts";
import { median } from "./stats.ts";

export interface Startup {
  ms: number;
  rssMb: number;
  runs: number[];
}

export async function measureStartup(ca: BenchCa, runs = 5): Promise<Startup> {
  const dir = temporaryDirectory("shomei-bench-startup-");
  const env = { ...process.env, SHOMEI_MODE: "production", SHOMEI_TRUST_ANCHORS_FILE: ca.anchorsFile, SHOMEI_DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, "shomei.db")}`, HOST: "127.0.0.1", LOG_LEVEL: "warn" };
  const migrate = spawnSync(process.execPath, ["bin/shomei.js", "migrate"], { env, encoding: "utf8" });
  if (migrate.status !== 0) throw new Error(`shomei migrate failed: ${migrate.stderr}`);
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i++) {
    const port = await freePort();
    const started = performance.now();
    const child = spawn(...onEveryCpu(process.execPath, ["bin/shomei.js", "serve"]), { env: { ...env, PORT: String(port) }, stdio: "ignore" });
    try {
      for (;;) {
        if (child.exitCode !== null) throw new Error(`shomei serve exited with ${child.exitCode} before it answered`);
        const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
        if (ok) break;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      times.push(performance.now() - started);
      rss.push(residentMb(child.pid!));
    } finally {
      await stopProcess(child);
    }
  }
  return { ms: median(times), rssMb: median(rss), runs: times };
}

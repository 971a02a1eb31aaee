import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extensionsOf } from "../src/app/mode-extensions.ts";
import { mockExtension } from "../src/app/mock/mock-extension.ts";
import { mockFolders, mockInstaller } from "./support/mock-folders.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * The composition as a deployment without the mock would have it: production
 * mode only. It differs from src/app/mode-extensions.ts only in not naming
 * the mock.
 */
const productionOnly = `import type { Config } from "../config/schema.ts";
import type { Extension } from "./extension.ts";

export async function extensionsOf(config: Pick<Config, "mode">): Promise<Extension[]> {
  if (config.mode !== "mock") return [];
  throw new Error("this build has no mock environment");
}
`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dir: string;
const running = new Set<ChildProcess>();

/** Runs node with these arguments in the copy, to its end; killed after five minutes (a type-check on a busy machine) so it cannot outlive the test. */
function node(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: dir, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    running.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 300_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("the mock as a plug-in: mock mode installs it, production mode never reads it", () => {
  it("mock mode installs the mock extension; production mode installs nothing", async () => {
    expect(await extensionsOf({ mode: "mock" })).toEqual([mockExtension]);
    expect(await extensionsOf({ mode: "production" })).toEqual([]);
  });
});

// A copy of src without the mock's folders, with the production-only composition: what a deployment that
// leaves the mock out would build. It type-checks, builds, and serves in production mode.
describe("production mode with the mock's code absent", () => {
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "shomei-without-mock-"));
    const mock = mockFolders.map((folder) => path.join(root, "src", folder));
    cpSync(path.join(root, "src"), path.join(dir, "src"), {
      recursive: true,
      filter: (source) => !mock.some((folder) => source === folder || source.startsWith(folder + path.sep)),
    });
    writeFileSync(path.join(dir, "src", mockInstaller), productionOnly);
    // Its "type": "module" makes the sources and the build ES modules, as in the project.
    cpSync(path.join(root, "package.json"), path.join(dir, "package.json"));
    mkdirSync(path.join(dir, "scripts"));
    for (const script of ["build.mjs", "write-code-cache.mjs"]) cpSync(path.join(root, "scripts", script), path.join(dir, "scripts", script));
    cpSync(path.join(root, "bin"), path.join(dir, "bin"), { recursive: true });
    for (const shared of ["gen", "node_modules"]) symlinkSync(path.join(root, shared), path.join(dir, shared), "dir");
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({ extends: path.join(root, "tsconfig.json"), include: ["src", "gen"] }),
    );
  });

  afterAll(() => {
    for (const child of running) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("has none of the mock's files, type-checks, builds, and serves: ready, in production mode, with no /mock routes", async () => {
    const checked = await node([path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"]);
    expect(checked).toMatchObject({ code: 0, stdout: "" });

    const built = await node(["scripts/build.mjs"]);
    expect(built).toMatchObject({ code: 0, stderr: "" });
    expect(built.stdout).toContain("built dist/shomei.cjs");

    const child = spawn(process.execPath, ["bin/shomei.js", "serve", "--mode", "production", "--port", "0"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: dir, SHOMEI_DATA_DIR: path.join(dir, "data"), DATABASE_URL: `sqlite:${path.join(dir, "shomei.db")}`, HOST: "127.0.0.1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let stderr = "";
        child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
          stderr += chunk;
          const found = /is listening on (http:\/\/\S+) \(production mode\)/.exec(stderr);
          if (found) resolve(found[1]!);
        });
        child.stdout!.resume();
        child.on("close", (code) => reject(new Error(`serve ended (${String(code)}) before listening: ${stderr}`)));
      });
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      const info = await fetch(`${url}/service.verify.v2.ServerInfoService/GetServerInfo`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(await info.json()).toMatchObject({ mode: "MODE_PRODUCTION" });
      expect((await fetch(`${url}/mock/ca.crt`)).status).toBe(404);
      expect((await fetch(`${url}/.well-known/openid-configuration`)).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
  }, 600_000);
});

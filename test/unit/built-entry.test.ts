import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

/**
 * bin/shomei.js runs the build in dist/ with plain node: it refuses to run
 * without one, or with one older than the sources, and says what to do.
 * Exercised on a copy of the entry point in a folder laid out like a checkout.
 */
const entry = path.resolve("bin/shomei.js");
let root: string | undefined;

function checkout(files: Record<string, { text: string; ageSeconds: number }>): string {
  root = mkdtempSync(path.join(tmpdir(), "shomei-entry-"));
  mkdirSync(path.join(root, "bin"));
  copyFileSync(entry, path.join(root, "bin", "shomei.js"));
  copyFileSync(path.resolve("bin/built-code.cjs"), path.join(root, "bin", "built-code.cjs"));
  copyFileSync(path.resolve("bin/package.json"), path.join(root, "bin", "package.json"));
  const now = Date.now() / 1000;
  for (const [name, { text, ageSeconds }] of Object.entries(files)) {
    const file = path.join(root, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    utimesSync(file, now - ageSeconds, now - ageSeconds);
  }
  return root;
}

function run(folder: string) {
  const result = spawnSync(process.execPath, [path.join(folder, "bin", "shomei.js"), "version"], { encoding: "utf8" });
  return { status: result.status, out: result.stdout, err: result.stderr };
}

afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

describe("the shomei command runs the built server", () => {
  it("runs dist/shomei.cjs when it is newer than every source", () => {
    const folder = checkout({
      "src/cli/main.ts": { text: "", ageSeconds: 60 },
      "gen/x_pb.ts": { text: "", ageSeconds: 60 },
      "dist/shomei.cjs": { text: 'console.log("built code ran with", process.argv.slice(2).join(" "));', ageSeconds: 1 },
    });
    expect(run(folder)).toEqual({ status: 0, out: "built code ran with version\n", err: "" });
  });

  it("refuses to run without a build, saying npm run build", () => {
    expect(run(checkout({ "src/cli/main.ts": { text: "", ageSeconds: 60 } }))).toMatchObject({ status: 1, out: "", err: expect.stringContaining("run `npm run build`") });
  });

  it("refuses a build older than a source file, saying npm run build", () => {
    const folder = checkout({
      "dist/shomei.cjs": { text: 'console.log("stale code ran");', ageSeconds: 60 },
      "src/domain/changed.ts": { text: "", ageSeconds: 1 },
    });
    expect(run(folder)).toEqual({ status: 1, out: "", err: "the build in dist/ is older than the sources: run `npm run build`\n" });
  });
});

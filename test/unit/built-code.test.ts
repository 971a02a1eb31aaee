import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { build } from "esbuild";

/**
 * bin/built-code.cjs loads the build with V8's code cache, which the build
 * writes (scripts/write-code-cache.mjs); with --enable-source-maps it
 * requires the bundle instead, so that stack traces lead back to the sources.
 */
const loader = path.resolve("bin/built-code.cjs");
let folder: string | undefined;

afterEach(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
  folder = undefined;
});

/** Runs a few lines of an ES module with the loader imported as `code`. */
function node(lines: string, nodeArguments: string[] = []) {
  const program = `import code from ${JSON.stringify(loader)};\n${lines}`;
  const result = spawnSync(process.execPath, [...nodeArguments, "--input-type=module", "-e", program], { encoding: "utf8" });
  return { status: result.status, out: result.stdout, err: result.stderr };
}

describe("the built server's loader", () => {
  it("takes the code cache the build wrote for this checkout's bundle (V8 would refuse one for another bundle or Node)", () => {
    const root = path.resolve(".");
    expect(node(`console.log(code.compileBuilt(code.builtFiles(${JSON.stringify(root)})).cacheRejected);`)).toEqual({ status: 0, out: "false\n", err: "" });
  });

  it("runs a bundle as a CommonJS module, with its command line, and maps its stack traces to the sources when asked", async () => {
    folder = mkdtempSync(path.join(tmpdir(), "shomei-built-code-"));
    mkdirSync(path.join(folder, "src"));
    writeFileSync(path.join(folder, "src", "main.ts"), 'const answer: string = `ran with ${process.argv.slice(2).join(" ")}`;\nif (process.argv.includes("fail")) throw new Error("failed on purpose");\nconsole.log(answer, typeof require, typeof module);\n');
    await build({ entryPoints: [path.join(folder, "src", "main.ts")], outfile: path.join(folder, "dist", "shomei.cjs"), bundle: true, format: "cjs", platform: "node", sourcemap: "linked", logLevel: "silent" });
    const files = `code.builtFiles(${JSON.stringify(folder)})`;
    const run = (args: string[], nodeArguments: string[] = []) =>
      node(`process.argv.splice(1, Infinity, "shomei", ...${JSON.stringify(args)});\ntry { code.runBuilt(${files}); } catch (error) { console.log(error.stack.split("\\n")[1].trim()); }`, nodeArguments);

    expect(run(["serve"])).toEqual({ status: 0, out: "ran with serve function object\n", err: "" });
    expect(run(["fail"]).out).toMatch(/^at .*dist\/shomei\.cjs:\d+:\d+\)?\n$/);
    expect(run(["fail"], ["--enable-source-maps"]).out).toMatch(/^at .*src\/main\.ts:2:\d+\)?\n$/);
  });
});

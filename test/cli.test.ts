import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maskUrl } from "../src/storage/database.ts";
import { migrations } from "../src/storage/migrations/index.ts";
import { databaseTargets, postgresUrl, targetTitle } from "./support/databases.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const names = Object.keys(migrations);
const latest = names.at(-1);
const stackFrame = /^\s+at /m;

let dir: string;
const running = new Set<ChildProcess>();

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "shomei-cli-"));
});

afterAll(() => {
  for (const child of running) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node bin/shomei.js …` from the project root with a clean environment:
 * no DATABASE_URL, PORT or SHOMEI_* from the caller, only what the test sets.
 * The data directory points into the test's temporary directory, so a command
 * that fell back to the default database could not write into the project.
 */
function shomei(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/shomei.js", ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir, SHOMEI_DATA_DIR: path.join(dir, "data"), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    // A command that should have exited but kept running (say, a server that started) must not outlive the test.
    const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      running.delete(child);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

// Each case starts its own process (a second or two, mostly loading TypeScript); they are independent, so they run side by side.
describe.concurrent("shomei help and usage", () => {
  it("--help exits 0 and lists serve and migrate", async () => {
    const run = await shomei(["--help"]);

    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/^Usage: shomei <command> \[options\]$/m);
    expect(run.stdout).toMatch(/^ {2}serve +run the service/m);
    expect(run.stdout).toMatch(/^ {2}migrate +apply pending database migrations and exit$/m);
  });

  it("prints the same help with no arguments", async () => {
    const [bare, help] = await Promise.all([shomei([]), shomei(["--help"])]);
    expect(bare).toEqual(help);
  });

  it("serve --help exits 0 and lists its options", async () => {
    const run = await shomei(["serve", "--help"]);

    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toContain("Usage: shomei serve [--mode mock|production] [--port N] [--config FILE]");
    for (const option of ["--mode", "--port", "--config", "--help"]) expect(run.stdout).toMatch(new RegExp(`^ {2}${option} +\\S`, "m"));
  });

  it("migrate --help exits 0 and lists its options", async () => {
    const run = await shomei(["migrate", "--help"]);

    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toContain("Usage: shomei migrate [--config FILE]");
    expect(run.stdout).toMatch(/^ {2}--config +JSON config file/m);
    expect(run.stdout).not.toMatch(/--port/);
  });

  it("an unknown command exits 2 with the list of commands", async () => {
    const run = await shomei(["frobnicate"]);

    expect(run).toMatchObject({ code: 2, stdout: "" });
    expect(run.stderr).toMatch(/^shomei: unknown command "frobnicate"\n\n/);
    expect(run.stderr).toMatch(/^ {2}serve +/m);
    expect(run.stderr).not.toMatch(stackFrame);
  });

  it("an unknown option exits 2 with the command's usage", async () => {
    const run = await shomei(["serve", "--prot", "8080"]);

    expect(run).toMatchObject({ code: 2, stdout: "" });
    expect(run.stderr).toMatch(/^shomei serve: Unknown option '--prot'/);
    expect(run.stderr).toContain("Usage: shomei serve [--mode mock|production] [--port N] [--config FILE]");
    expect(run.stderr).not.toMatch(stackFrame);
  });

  it("an unexpected argument to serve exits 2 with the usage", async () => {
    const run = await shomei(["serve", "now"]);

    expect(run).toMatchObject({ code: 2, stdout: "" });
    expect(run.stderr).toContain("Usage: shomei serve");
    expect(run.stderr).not.toMatch(stackFrame);
  });

  it("card sign without its key, with a bad request URL, or unreachable: a clear error, no stack trace", async () => {
    const noKey = await shomei(["card", "sign", "http://127.0.0.1:9/api/jpki/v1/sign-requests/x", "--code", "123456"]);
    expect(noKey).toMatchObject({ code: 2, stdout: "" });
    expect(noKey.stderr).toMatch(/^shomei card: --key and --certificate are required\n\n/);
    const notUrl = await shomei(["card", "sign", "not a url", "--key", "k", "--certificate", "c", "--code", "1"]);
    expect(notUrl).toMatchObject({ code: 2 });
    expect(notUrl.stderr).toMatch(/^shomei card: the request URL is not a URL/);
    const badCount = await shomei(["card", "sign", "http://127.0.0.1:9/x", "--key", "k", "--certificate", "c", "--code", "1", "--pin-attempts-left", "many"]);
    expect(badCount.stderr).toMatch(/^shomei card: --pin-attempts-left must be a number from 0 to 99/);
    writeFileSync(path.join(dir, "card.key"), "not parsed before the request is read");
    const unreachable = await shomei(["card", "sign", "http://127.0.0.1:9/api/jpki/v1/sign-requests/x", "--key", path.join(dir, "card.key"), "--certificate", path.join(dir, "card.key"), "--code", "1"]);
    expect(unreachable).toMatchObject({ code: 1, stdout: "" });
    expect(unreachable.stderr).toMatch(/^shomei card: unreachable: cannot reach http:\/\/127\.0\.0\.1:9 /);
    for (const run of [noKey, notUrl, badCount, unreachable]) expect(run.stderr).not.toMatch(stackFrame);
  });
});

describe.concurrent("shomei serve failing to start", () => {
  it("PORT=abc exits 1 naming PORT, without a stack trace", async () => {
    const run = await shomei(["serve"], { PORT: "abc" });

    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toBe(`shomei serve: invalid configuration:\n  - PORT must be a number (got "abc")\n`);
    expect(run.stderr).not.toMatch(stackFrame);
  });

  it("--port abc exits 1 naming the option", async () => {
    const run = await shomei(["serve", "--port", "abc"]);

    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`shomei serve: invalid configuration:\n  - --port must be a number (got "abc")\n`);
  });

  it("a BASE_URL that is not a URL exits 1 with a message, not a crash", async () => {
    const run = await shomei(["serve"], { BASE_URL: "id.example.com" });

    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `shomei serve: invalid configuration:\n  - BASE_URL must be an absolute http:// or https:// URL (got "id.example.com")\n`,
    );
  });

  it("a config file that is not JSON exits 1 naming the file", async () => {
    const file = path.join(dir, "broken.json");
    writeFileSync(file, "{ port: 1 }");
    const run = await shomei(["serve", "--config", file]);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^shomei serve: config file ${file} is not valid JSON: .+\\n$`));
  });

  it("an unreachable PostgreSQL exits 1 saying the database cannot be reached, without a stack trace", async () => {
    const run = await shomei(["serve"], { DATABASE_URL: "postgres://postgres@127.0.0.1:1/test" });

    expect(run.code).toBe(1);
    expect(run.stderr).toBe("shomei serve: cannot reach database postgres://postgres@127.0.0.1:1/test: connect ECONNREFUSED 127.0.0.1:1\n");
    expect(run.stderr + run.stdout).not.toMatch(stackFrame);
  });

  it.each([
    ["postgres://shomei:s3cret-Pa55@127.0.0.1:1/test", "postgres://shomei:***@127.0.0.1:1/test", ["s3cret-Pa55"]],
    ["postgresql://shomei:p%40ss%3Aword@127.0.0.1:1/test", "postgresql://shomei:***@127.0.0.1:1/test", ["p%40ss", "ss%3Aword"]],
    // Unescaped "@" in the password: everything up to the last "@" is the password.
    ["postgres://shomei:p@ss@127.0.0.1:1/test", "postgres://shomei:***@127.0.0.1:1/test", ["p@ss", "ss@"]],
  ])("masks the password of %s in the message", async (url, shown, secrets) => {
    const run = await shomei(["serve"], { DATABASE_URL: url });

    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`shomei serve: cannot reach database ${shown}: connect ECONNREFUSED 127.0.0.1:1\n`);
    for (const secret of secrets) expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it("a mysql:// DATABASE_URL exits 1 before connecting anywhere", async () => {
    const run = await shomei(["migrate"], { DATABASE_URL: "mysql://root@127.0.0.1:1/shomei" });

    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `shomei migrate: invalid configuration:\n  - DATABASE_URL must be postgres://…, postgresql://…, sqlite:<path> or a file path (got "mysql://root@127.0.0.1:1/shomei")\n`,
    );
  });
});

describe("shomei migrate on SQLite", () => {
  it("applies every migration to a fresh file, then says it is up to date", async () => {
    const file = path.join(dir, "migrate", "shomei.db");
    const url = `sqlite:${file}`;

    const first = await shomei(["migrate"], { DATABASE_URL: url });
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(first.stdout).toBe(`applied ${names.length} migration(s) to ${url}: ${names.join(", ")}\n`);
    expect(existsSync(file)).toBe(true);

    const second = await shomei(["migrate"], { DATABASE_URL: url });
    expect(second).toMatchObject({ code: 0, stderr: "" });
    expect(second.stdout).toBe(`${url} is up to date (at ${latest})\n`);
  });

  it("reads the database URL from a config file", async () => {
    const url = `sqlite:${path.join(dir, "from-file", "shomei.db")}`;
    const file = path.join(dir, "migrate-config.json");
    writeFileSync(file, JSON.stringify({ databaseUrl: url }));

    const run = await shomei(["migrate", "--config", file]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toBe(`applied ${names.length} migration(s) to ${url}: ${names.join(", ")}\n`);
  });
});

const postgres = (await databaseTargets()).find((t) => t.name === "postgres")!;

describe.skipIf(!!postgres.unavailable)(`shomei migrate on ${targetTitle(postgres)}`, () => {
  it("applies every migration to a scratch database, then says it is up to date", async () => {
    const scratch = await postgres.create();
    try {
      const first = await shomei(["migrate"], { DATABASE_URL: scratch.url });
      expect(first).toMatchObject({ code: 0, stderr: "" });
      expect(first.stdout).toBe(`applied ${names.length} migration(s) to ${maskUrl(scratch.url)}: ${names.join(", ")}\n`);

      const second = await shomei(["migrate"], { DATABASE_URL: scratch.url });
      expect(second).toMatchObject({ code: 0, stderr: "" });
      expect(second.stdout).toBe(`${maskUrl(scratch.url)} is up to date (at ${latest})\n`);
    } finally {
      await scratch.drop();
    }
  });

  it("reports a database that does not exist as unreachable, exit 1", async () => {
    const missing = `shomei_missing_${process.pid}_${Date.now().toString(36)}`;
    const url = new URL(postgresUrl);
    url.pathname = `/${missing}`;
    const run = await shomei(["migrate"], { DATABASE_URL: url.toString() });

    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`shomei migrate: cannot reach database ${maskUrl(url.toString())}: database "${missing}" does not exist (3D000)\n`);
  });
});

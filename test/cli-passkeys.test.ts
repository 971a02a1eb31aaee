import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../src/domain/clock.ts";
import { OidcUsers } from "../src/domain/oidc/users.ts";
import { openDatabase, type Database } from "../src/storage/database.ts";
import { migrateToLatest } from "../src/storage/migrate.ts";
import { OidcRepository } from "../src/storage/oidc-repository.ts";
import { PasskeysRepository } from "../src/storage/passkeys-repository.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `shomei user passkeys list|remove` on a database of the file's own: what
 * an operator sees of a user's passkeys, and removing one (a lost device).
 */
describe("shomei user passkeys", () => {
  let dir: string;
  let databaseUrl: string;
  let database: Database;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "shomei-cli-passkeys-"));
    databaseUrl = `sqlite:${path.join(dir, "x.db")}`;
    database = await openDatabase(databaseUrl);
    await migrateToLatest(database);
  });

  afterAll(async () => {
    await database?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function shomei(...args: string[]): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ["bin/shomei.js", ...args], {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", HOME: dir, SHOMEI_DATA_DIR: path.join(dir, "data"), DATABASE_URL: databaseUrl },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** A user of the test's own with two passkeys, the second used once. */
  async function userWithPasskeys(): Promise<{ login: string; ids: [string, string] }> {
    const login = `cli-${randomBytes(4).toString("hex")}`;
    const user = await new OidcUsers(new OidcRepository(database), randomBytes(32), systemClock).create({ login, password: "a long password" });
    const store = new PasskeysRepository(database);
    const ids = [randomBytes(16).toString("base64url"), randomBytes(16).toString("base64url")] as [string, string];
    for (const [i, id] of ids.entries()) {
      await store.insertPasskey({
        credentialId: id,
        userId: user.id,
        userHandle: "h",
        publicKey: "k",
        signCount: 0,
        transports: [],
        backupEligible: i === 0,
        backedUp: false,
        name: i === 0 ? "Phone" : "Security key",
        createdAt: Date.UTC(2026, 0, 1 + i),
        lastUsedAt: null,
      });
    }
    await store.recordUse(ids[1], 0, { signCount: 3, backedUp: false, usedAt: Date.UTC(2026, 0, 5) });
    return { login, ids };
  }

  it("lists a user's passkeys, oldest first, with their id, name, kind, counter and dates", async () => {
    const { login, ids } = await userWithPasskeys();
    const run = await shomei("user", "passkeys", "list", login);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split("\n")).toEqual([
      `${ids[0]}\tPhone\tsynced\tcounter 0\tadded 2026-01-01T00:00:00.000Z\tnever used`,
      `${ids[1]}\tSecurity key\tdevice-bound\tcounter 3\tadded 2026-01-02T00:00:00.000Z\tlast used 2026-01-05T00:00:00.000Z`,
    ]);
  });

  it("removes one passkey; another user's login or an unknown id removes nothing and says why", async () => {
    const { login, ids } = await userWithPasskeys();
    const other = await userWithPasskeys();
    // A credential id is base64url and may start with "-": after "--", as the CLI's usage says, it is never read as an option.
    const foreign = await shomei("user", "passkeys", "remove", other.login, "--", ids[0]);
    expect(foreign.code).not.toBe(0);
    expect(foreign.stderr).toContain(`${other.login} has no passkey ${ids[0]}`);
    expect(foreign.stderr).not.toMatch(/^\s+at /m);
    const removed = await shomei("user", "passkeys", "remove", login, "--", ids[0]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain(`removed passkey ${ids[0]} of ${login}`);
    expect((await shomei("user", "passkeys", "list", login)).stdout).not.toContain(ids[0]);
    expect((await shomei("user", "passkeys", "list", other.login)).stdout).toContain(other.ids[0]);
  });

  it("refuses an unknown user, a missing credential id and an unknown action with a clear message", async () => {
    const unknown = await shomei("user", "passkeys", "list", "nobody-here");
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("no user nobody-here");
    const missing = await shomei("user", "passkeys", "remove", "nobody-here");
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("needs a login and a credential id");
    const action = await shomei("user", "passkeys", "add", "x");
    expect(action.code).not.toBe(0);
    expect(action.stderr).toContain("use list or remove");
  });
});

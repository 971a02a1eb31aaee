import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadOrCreateKeyFile } from "../../../src/adapters/files/key-file.ts";

const run = promisify(execFile);
const modulePath = fileURLToPath(new URL("../../../src/adapters/files/key-file.ts", import.meta.url));
const posix = process.platform !== "win32";

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "shomei-key-"));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe("key file", () => {
  it("creates a 32-byte key as hex, mode 0600, in a new 0700 directory, and reads it back", async () => {
    const path = join(directory, "secrets", "nested", "box.key");
    const key = await loadOrCreateKeyFile(path);
    expect(key).toHaveLength(32);
    const text = await readFile(path, "utf8");
    expect(text).toMatch(/^[0-9a-f]{64}\n$/);
    expect(text.trim()).toBe(key.toString("hex"));
    if (posix) {
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await stat(join(directory, "secrets"))).mode & 0o777).toBe(0o700);
    }
    expect((await loadOrCreateKeyFile(path)).equals(key)).toBe(true);
    expect(await readdir(join(directory, "secrets", "nested"))).toEqual(["box.key"]);
  });

  it("reads an existing key as written", async () => {
    const path = join(directory, "box.key");
    const hex = "00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff";
    await writeFile(path, hex);
    expect((await loadOrCreateKeyFile(path)).toString("hex")).toBe(hex.toLowerCase());
  });

  it("refuses, and leaves alone, a malformed key file", async () => {
    const path = join(directory, "box.key");
    for (const content of ["", "abc\n", `${"0".repeat(62)}\n`, `${"0".repeat(66)}\n`, `${"g".repeat(64)}\n`, `${"0".repeat(64)}\n\n`]) {
      await writeFile(path, content);
      await expect(loadOrCreateKeyFile(path)).rejects.toThrow(/malformed/);
      expect(await readFile(path, "utf8")).toBe(content);
    }
  });

  it("gives concurrent callers in one process the same key", async () => {
    const path = join(directory, "box.key");
    const keys = await Promise.all(Array.from({ length: 20 }, () => loadOrCreateKeyFile(path)));
    const hex = new Set(keys.map((key) => key.toString("hex")));
    expect(hex.size).toBe(1);
    expect([...hex][0]).toBe((await readFile(path, "utf8")).trim());
    expect(await readdir(directory)).toEqual(["box.key"]);
  });

  it("gives concurrent processes the same key", async () => {
    const path = join(directory, "shared", "box.key");
    const script = `import { loadOrCreateKeyFile } from ${JSON.stringify(modulePath)};
      process.stdout.write((await loadOrCreateKeyFile(${JSON.stringify(path)})).toString("hex"));`;
    const outputs = await Promise.all(
      Array.from({ length: 6 }, () => run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script])),
    );
    const keys = new Set(outputs.map((output) => output.stdout));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f]{64}$/);
    expect([...keys][0]).toBe((await readFile(path, "utf8")).trim());
    expect(await readdir(join(directory, "shared"))).toEqual(["box.key"]);
  });

  it("does not swallow errors other than a missing file", async () => {
    const path = join(directory, "is-a-directory");
    await mkdir(path);
    await expect(loadOrCreateKeyFile(path)).rejects.toMatchObject({ code: "EISDIR" });
  });
});

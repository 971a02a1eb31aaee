import { randomBytes } from "node:crypto";
import { link, mkdir, open, readFile, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { secretBoxKeyBytes } from "../../domain/credentials/secret-box.ts";

/**
 * The secret box key, kept in a file of its own: 64 hex digits and a newline,
 * mode 0600, in a directory created 0700 if missing. The first process to
 * need it creates it; a process racing with another ends with the same key,
 * because the file only appears complete (written to a temporary file, then
 * hard-linked into place, which fails rather than replaces if the name exists)
 * and everyone reads back whatever won.
 *
 * An existing file is never rewritten: losing this key makes every value
 * sealed under it unreadable, so a malformed file is an error to fix by hand.
 * The file's permissions are not checked (secrets mounted by orchestrators are
 * often group-readable); keep it private.
 */
export async function loadOrCreateKeyFile(path: string): Promise<Buffer> {
  const existing = await readKeyFile(path);
  if (existing !== undefined) return existing;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await createKeyFile(path);
  const key = await readKeyFile(path);
  if (key === undefined) throw new Error(`key file ${path} disappeared after it was created`);
  return key;
}

async function readKeyFile(path: string): Promise<Buffer | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const hexDigits = secretBoxKeyBytes * 2;
  if (!new RegExp(`^[0-9a-fA-F]{${hexDigits}}\\r?\\n?$`).test(text)) {
    throw new Error(`key file ${path} is malformed: expected ${hexDigits} hexadecimal digits`);
  }
  return Buffer.from(text.slice(0, hexDigits), "hex");
}

async function createKeyFile(path: string): Promise<void> {
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temporary, "wx", 0o600);
  try {
    try {
      await handle.writeFile(`${randomBytes(secretBoxKeyBytes).toString("hex")}\n`, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temporary, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      return; // another process created it first; its key is the one
    }
    await syncDirectory(directory);
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/** Makes the new name durable, so a crash cannot bring back a keyless directory after values were sealed. */
async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, "r");
    await handle.sync();
  } catch {
    // Not every platform can open or sync a directory (Windows cannot); the file itself was synced.
  } finally {
    await handle?.close();
  }
}

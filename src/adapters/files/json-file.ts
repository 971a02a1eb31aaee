import { readFileSync } from "node:fs";
import type * as z from "zod";

/**
 * An operator's JSON file, read and checked against its schema; any problem
 * is one error naming the file and, for a schema problem, the member at fault
 * (made by the caller's `fail`, so each file keeps its own error).
 */
export function readJsonFile<T>(file: string, schema: z.ZodType<T>, fail: (file: string, problem: string) => Error): T {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw fail(file, e.code ? `cannot read it (${e.code})` : `not valid JSON (${e.message})`);
  }
  // Read once, at start-up: without zod's compiled fast path, which costs more to make than one parse saves.
  const parsed = schema.safeParse(document, { jitless: true });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw fail(file, `${issue.path.join(".") || "the document"} ${issue.message}`);
  }
  return parsed.data;
}

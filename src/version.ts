import { readFileSync } from "node:fs";

/** The package version, read once; shown by --help, GetServerInfo and the start-up banner. */
export const version: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

import { Writable } from "node:stream";
import { loadConfig } from "../../src/config/load.ts";
import type { SettingName } from "../../src/config/schema.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { startServer, type RunningServer } from "../../src/server/server.ts";

export interface TestServer extends RunningServer {
  /** Every log line the server wrote, parsed. */
  logs: Record<string, unknown>[];
  /** Raw log text, for checks that a secret never appears anywhere. */
  rawLogs(): string;
}

/** The real server on 127.0.0.1, port 0, with the given database and settings; logs captured in memory. */
export async function startTestServer(
  databaseUrl: string,
  settings: Partial<Record<SettingName, unknown>> = {},
): Promise<TestServer> {
  const config = loadConfig({
    env: {},
    // Request lines on (SHOMEI_ACCESS_LOG): tests read them; a test of the default passes accessLog: false.
    overrides: { host: "127.0.0.1", port: 0, databaseUrl, logLevel: "info", mode: "mock", accessLog: true, ...settings },
  });
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      callback();
    },
  });
  const server = await startServer(config, createLogger(config.logLevel, sink));
  const testServer: TestServer = Object.assign(server, {
    logs: [] as Record<string, unknown>[],
    rawLogs: () => lines.join("\n"),
  });
  // A getter, so that every read sees the lines written so far (Object.assign would copy a snapshot of a getter's value).
  Object.defineProperty(testServer, "logs", {
    enumerable: true,
    get: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  });
  return testServer;
}

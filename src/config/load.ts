import { readFileSync } from "node:fs";
import path from "node:path";
import { configSchema, settings, type Config, type SettingName } from "./schema.ts";

/** A configuration problem, already phrased for the operator; never shown with a stack trace. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** Path of a JSON file; defaults to SHOMEI_CONFIG from the environment. */
  file?: string | undefined;
  /** Values given on the command line; they win over the environment and the file. */
  overrides?: Partial<Record<SettingName, unknown>>;
}

export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const file = options.file ?? env.SHOMEI_CONFIG;
  const raw: Record<string, unknown> = {};
  const origin: Record<string, string> = {};

  if (file) {
    const fromFile = readConfigFile(file);
    for (const [key, value] of Object.entries(fromFile)) {
      raw[key] = value;
      origin[key] = `"${key}" in ${file}`;
    }
  }
  for (const [key, { env: variable }] of Object.entries(settings)) {
    const value = env[variable];
    if (value !== undefined && value !== "") {
      raw[key] = value;
      origin[key] = variable;
    }
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) {
    if (value !== undefined) {
      raw[key] = value;
      origin[key] = `--${key.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())}`;
    }
  }

  // Parsed once per process: without zod's compiled fast path, which costs more to make than one parse saves.
  const result = configSchema.safeParse(raw, { jitless: true });
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? "");
      if (issue.code === "unrecognized_keys") {
        return `unknown setting${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")} in ${file}`;
      }
      const value = raw[key];
      const shown = value === undefined ? "" : ` (got ${JSON.stringify(value)})`;
      return `${origin[key] ?? key} ${issue.message}${shown}`;
    });
    throw new ConfigError(`invalid configuration:\n  - ${lines.join("\n  - ")}`);
  }
  const parsed = result.data;
  return {
    ...parsed,
    baseUrl: parsed.baseUrl ?? `http${parsed.tlsCertFile ? "s" : ""}://localhost:${parsed.port}`,
    baseUrlDerived: parsed.baseUrl === undefined,
    databaseUrl: parsed.databaseUrl ?? `sqlite:${path.join(parsed.dataDir, "shomei.db")}`,
    webhookAllowPrivate: parsed.webhookAllowPrivate ?? parsed.mode === "mock",
  };
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read config file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError(`config file ${file} must hold a JSON object`);
  }
  return value as Record<string, unknown>;
}

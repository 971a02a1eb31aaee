import type { Config } from "../config/schema.ts";
import type { Extension } from "./extension.ts";

/**
 * What the configured mode adds to the server: in mock mode the mock
 * environment, in production mode nothing. The one place outside the mock's
 * own folders that names it (test/unit/import-graph.test.ts holds that), and
 * it loads it only here, with import(): a server in production mode never
 * reads the mock's code, and builds and runs without it.
 */
export async function extensionsOf(config: Pick<Config, "mode">): Promise<Extension[]> {
  if (config.mode !== "mock") return [];
  const { mockExtension } = await import("./mock/mock-extension.ts");
  return [mockExtension];
}

import type { Clock } from "../../src/domain/clock.ts";
import { ClientKeys, type KeySetSource } from "../../src/domain/oidc/client-keys.ts";

/** A key set source that answers every fetch with an error: for tests whose clients register `jwks` inline. */
export const noKeySetSource: KeySetSource = { read: async (uri) => ({ error: `${uri}: this test reaches no network` }) };

/** ClientKeys for clients with inline `jwks` (and the production settings, for those that have jwks_uri). */
export function inlineClientKeys(clock: Clock, source: KeySetSource = noKeySetSource): ClientKeys {
  return new ClientKeys(source, clock, { cacheTtlMs: 300_000, refetchCooldownMs: 30_000 });
}

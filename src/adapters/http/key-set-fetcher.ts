import type { KeySetSource } from "../../domain/oidc/client-keys.ts";
import { createGuardedRequests } from "./guarded-request.ts";

export interface KeySetFetcherSettings {
  /** Whether plain http: and loopback, private or link-local addresses may be reached (SHOMEI_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** The whole exchange within this. */
  timeoutMs: number;
  /** The largest body read; a larger one is refused, not read to the end. */
  maxBytes: number;
}

/**
 * Reads a client's jwks_uri under the network policy of every URL others
 * register (guarded-request.ts): one GET, no redirects, a deadline, at most
 * maxBytes, a connection of its own (no kept-alive sockets to close), and
 * a 200 with a JSON body or a reason the client may be told.
 */
export function createKeySetFetcher(settings: KeySetFetcherSettings): KeySetSource {
  const requests = createGuardedRequests({ timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivate, keepAlive: false });
  return {
    async read(uri) {
      const answer = await requests.request({
        url: uri,
        method: "GET",
        headers: { accept: "application/jwk-set+json, application/json" },
        readBytes: settings.maxBytes + 1,
      });
      if ("error" in answer) return { error: `${uri}: ${answer.error}` };
      if (answer.statusCode >= 300 && answer.statusCode < 400) return { error: `${uri}: answered ${answer.statusCode}; redirects are not followed` };
      if (answer.statusCode !== 200) return { error: `${uri}: answered ${answer.statusCode}, not 200` };
      if (!answer.complete || answer.body.length > settings.maxBytes) return { error: `${uri}: the key set is larger than ${settings.maxBytes} bytes` };
      try {
        return { document: JSON.parse(answer.body.toString("utf8")) as unknown };
      } catch {
        return { error: `${uri}: the answer is not JSON` };
      }
    },
  };
}

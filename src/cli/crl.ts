import type { Config } from "../config/schema.ts";
import { isCurrent } from "../domain/certificates/crl/crl-freshness.ts";
import { withDomain } from "./admin.ts";
import { UsageError } from "./usage-error.ts";

function date(ms: number | undefined): string {
  return ms === undefined ? "-" : new Date(ms).toISOString();
}

/**
 * `shomei crl list`: the CRLs the instances on this database share, one line
 * each: issuer, URL, state (current, stale, none), its dates, crlNumber,
 * entries, when it was last confirmed at its source, and the last error.
 */
export async function crlCommand(config: Config, args: string[]): Promise<void> {
  const [action] = args;
  if (action !== "list") throw new UsageError(`unknown action "${action ?? ""}": use list`);
  await withDomain(config, async ({ crlLists }) => {
    const now = Date.now();
    for (const r of await crlLists.stored()) {
      const state =
        r.sha256 === undefined || r.thisUpdate === undefined
          ? "none"
          : isCurrent({ thisUpdate: r.thisUpdate, nextUpdate: r.nextUpdate }, now)
            ? "current"
            : "stale";
      console.log(
        [
          r.issuerName ?? `${r.issuerAnchor} (not configured)`,
          r.url,
          state,
          `thisUpdate ${date(r.thisUpdate)}`,
          `nextUpdate ${date(r.nextUpdate)}`,
          `crlNumber ${r.crlNumber?.toString() ?? "-"}`,
          `entries ${r.entries ?? "-"}`,
          `checked ${date(r.checkedAt)}`,
          r.lastError ? `last error ${date(r.lastErrorAt)}: ${r.lastError}` : "no error",
        ].join("\t"),
      );
    }
  });
}

import { createHmac, timingSafeEqual } from "node:crypto";
import { DomainError } from "../errors.ts";

/** Where the check value lives; the first value recorded stays. */
export interface ServerKeyCheckStore {
  /** Records the value unless one is recorded already; returns the recorded one. */
  recordOnce(keyCheck: string, now: number): Promise<string>;
}

/**
 * Refuses a server key other than the one the database's sealed values were
 * written with. Instances sharing a database must share the key
 * (SHOMEI_SECRET_KEY_FILE); one started with its own would answer 500 on
 * every sealed value (ID token signing keys, TOTP secrets) while reporting
 * itself ready. The check value is an HMAC of a fixed text, so it reveals
 * nothing of the key.
 */
export async function ensureServerKeyMatches(store: ServerKeyCheckStore, secretKey: Buffer, now: number): Promise<void> {
  const mine = createHmac("sha256", secretKey).update("shomei server key check").digest("base64url");
  const recorded = await store.recordOnce(mine, now);
  const same = recorded.length === mine.length && timingSafeEqual(Buffer.from(recorded), Buffer.from(mine));
  if (!same) {
    throw new DomainError(
      "server_key_mismatch",
      "the server key differs from the one this database was written with: every instance on one database needs the same key file (SHOMEI_SECRET_KEY_FILE)",
    );
  }
}

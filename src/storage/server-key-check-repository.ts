import type { ServerKeyCheckStore } from "../domain/credentials/server-key-check.ts";
import type { Database } from "./database.ts";

const rowId = "server-key";

/** The server key check (migration 0012): written by the first instance, read by every later one. */
export class ServerKeyCheckRepository implements ServerKeyCheckStore {
  constructor(private readonly database: Database) {}

  async recordOnce(keyCheck: string, now: number): Promise<string> {
    await this.database.db
      .insertInto("server_key_check")
      .values({ id: rowId, key_check: keyCheck, created_at: now })
      .onConflict((conflict) => conflict.column("id").doNothing())
      .execute();
    const row = await this.database.db.selectFrom("server_key_check").select("key_check").where("id", "=", rowId).executeTakeFirstOrThrow();
    return row.key_check;
  }
}

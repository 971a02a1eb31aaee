import { sql, type Kysely } from "kysely";
import type { ExclusiveAttempts, LoginAttempt, LoginAttemptStore } from "../domain/credentials/login-throttle.ts";
import type { Database } from "./database.ts";
import type { Tables } from "./schema.ts";

/**
 * The sign-in throttle's reservations (migration 0010). Exclusion: on
 * PostgreSQL, a transaction holding an advisory lock per key (taken in sorted
 * order, so two reservations never wait on each other in a cycle); on SQLite,
 * a BEGIN IMMEDIATE transaction on the one connection, which excludes other
 * work in this process (Kysely queues users of the connection) and writers
 * in other processes.
 */
export class LoginAttemptsRepository implements LoginAttemptStore {
  constructor(private readonly database: Database) {}

  async exclusively<T>(keys: string[], work: (attempts: ExclusiveAttempts) => Promise<T>): Promise<T> {
    if (this.database.dialect === "postgres") {
      return this.database.db.transaction().execute(async (trx) => {
        for (const key of [...new Set(keys)].sort()) {
          await sql`select pg_advisory_xact_lock(hashtextextended(${`login_attempts:${key}`}, 0))`.execute(trx);
        }
        return work(attemptsOn(trx));
      });
    }
    return this.database.db.connection().execute(async (connection) => {
      await sql`begin immediate`.execute(connection);
      try {
        const result = await work(attemptsOn(connection));
        await sql`commit`.execute(connection);
        return result;
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
    });
  }

  async remove(id: string): Promise<void> {
    await this.database.db.deleteFrom("login_attempts").where("id", "=", id).execute();
  }

  async forgetAccount(accountKey: string): Promise<void> {
    await this.database.db.updateTable("login_attempts").set({ account_key: null }).where("account_key", "=", accountKey).execute();
  }
}

function attemptsOn(db: Kysely<Tables>): ExclusiveAttempts {
  return {
    async attemptTimes(keys: { accountKey?: string; addressKey?: string }, after: number): Promise<number[]> {
      let query = db.selectFrom("login_attempts").select("attempted_at").where("attempted_at", ">", after);
      if (keys.accountKey !== undefined) query = query.where("account_key", "=", keys.accountKey);
      if (keys.addressKey !== undefined) query = query.where("address_key", "=", keys.addressKey);
      const rows = await query.orderBy("attempted_at").execute();
      return rows.map((row) => Number(row.attempted_at));
    },
    async insert(attempt: LoginAttempt): Promise<void> {
      await db
        .insertInto("login_attempts")
        .values({ id: attempt.id, account_key: attempt.accountKey, address_key: attempt.addressKey, attempted_at: attempt.attemptedAt })
        .execute();
    },
  };
}

import type { Kysely } from "kysely";

/**
 * OpenID Connect Back-Channel Logout 1.0 (docs/backchannel-logout.md):
 * - oidc_clients.backchannel_logout_uri and
 *   backchannel_logout_session_required: the client's registration.
 * - oidc_session_clients: which clients were issued a code in which
 *   session (by the session id's hash, with the `sid` their ID tokens
 *   carry), kept for clients that registered a backchannel_logout_uri.
 *   Ending a session reads it and forgets it.
 * - oidc_logout_deliveries: the outbox of logout tokens, one row per
 *   (ended session, client), queued in the transaction that ends the
 *   session. Each instance claims due rows with a lease, as the webhook
 *   outbox does (migration 0028); the token is signed afresh at each
 *   attempt, with the row's id as its jti.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oidc_clients").addColumn("backchannel_logout_uri", "text").execute();
  await db.schema
    .alterTable("oidc_clients")
    .addColumn("backchannel_logout_session_required", "integer", (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable("oidc_session_clients")
    .addColumn("session_id_hash", "varchar(64)", (c) => c.notNull())
    .addColumn("client_id", "varchar(255)", (c) => c.notNull())
    .addColumn("sid", "varchar(64)", (c) => c.notNull())
    .addColumn("user_id", "varchar(36)", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("oidc_session_clients_pk", ["session_id_hash", "client_id"])
    .execute();

  await db.schema
    .createTable("oidc_logout_deliveries")
    .addColumn("id", "varchar(36)", (c) => c.primaryKey())
    .addColumn("client_id", "varchar(255)", (c) => c.notNull())
    .addColumn("user_id", "varchar(36)", (c) => c.notNull())
    .addColumn("sid", "varchar(64)", (c) => c.notNull())
    .addColumn("state", "varchar(12)", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
    .addColumn("lease_token", "varchar(36)")
    .addColumn("lease_until", "bigint")
    .addColumn("last_status_code", "integer")
    .addColumn("last_error", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  // What the delivery loop asks for: pending rows by due time.
  await db.schema.createIndex("oidc_logout_deliveries_due").on("oidc_logout_deliveries").columns(["state", "next_attempt_at"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("oidc_logout_deliveries").execute();
  await db.schema.dropTable("oidc_session_clients").execute();
  await db.schema.alterTable("oidc_clients").dropColumn("backchannel_logout_session_required").execute();
  await db.schema.alterTable("oidc_clients").dropColumn("backchannel_logout_uri").execute();
}

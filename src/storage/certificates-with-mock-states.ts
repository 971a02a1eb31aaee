import type { Kysely } from "kysely";
import type { StoredCertificate } from "../domain/certificates/model.ts";
import type { MockCertificateState, StatesReadWithCertificates } from "../domain/mock/mock-store.ts";
import { accountOfKeyedRows, keyIn, readByIds } from "./account-key-lookup.ts";
import { authVersionColumn, authVersionOf } from "./accounts-repository.ts";
import { certificateColumns, CertificatesRepository, toCertificate, type CertificatesRead } from "./certificates-repository.ts";
import type { Dialect } from "./database.ts";
import { toState } from "./mock-repository.ts";
import { preparedQuery } from "./prepared-query.ts";
import type { Tables } from "./schema.ts";

/**
 * The certificates repository of the mock environment: a certificate read by
 * id comes with its mock state in the same statement (a left join), and the
 * mock source takes that state instead of reading it again, so a status check
 * costs one statement less (a network round trip on PostgreSQL). States are
 * held by the certificate object they came with, and only until taken.
 */
export class CertificatesWithMockStates extends CertificatesRepository implements StatesReadWithCertificates {
  private readonly states = new WeakMap<StoredCertificate, MockCertificateState | null>();

  protected override async certificatesById(accountId: string, ids: readonly string[]): Promise<CertificatesRead> {
    const db = this.database.db;
    const rows = await readByIds(this.database.dialect, ids, {
      one: (id) => withStateById(db, accountId, id),
      array: (all) => withStatesByIdArray(db, accountId, all),
      list: (all) => withStatesByIds(db, "sqlite", accountId, all).execute(),
    });
    const found = new Map(
      rows.map((row) => {
        const state =
          row.state_certificate_id === null
            ? null
            : toState({
                certificate_id: row.state_certificate_id,
                status: row.state_status!,
                revoked_at: row.state_revoked_at,
                revoked_reason: row.state_revoked_reason,
                source_updated_at: row.state_source_updated_at,
                updated_at: row.state_updated_at!,
                offered_methods: row.state_offered_methods,
              });
        const make = (): StoredCertificate => {
          const certificate = toCertificate(row);
          this.states.set(certificate, state);
          return certificate;
        };
        return [row.id, make];
      }),
    );
    return { found, authVersion: authVersionOf(rows) };
  }

  take(certificate: StoredCertificate): MockCertificateState | null | undefined {
    const state = this.states.get(certificate);
    this.states.delete(certificate);
    return state;
  }
}

/** Certificates with their mock states (a left join); the caller says which. */
function withStates(db: Kysely<Tables>) {
  return db
    .selectFrom("certificates as c")
    .leftJoin("mock_certificate_states as s", "s.certificate_id", "c.id")
    .select(certificateColumns.map((column) => `c.${column}` as const))
    .select([
      "s.certificate_id as state_certificate_id",
      "s.status as state_status",
      "s.revoked_at as state_revoked_at",
      "s.revoked_reason as state_revoked_reason",
      "s.source_updated_at as state_source_updated_at",
      "s.updated_at as state_updated_at",
      "s.offered_methods as state_offered_methods",
    ])
    .select(authVersionColumn);
}

/** Certificates found by primary key (see accountOfKeyedRows), each with its mock state. Exported for the plan's test. */
export function withStatesByIds(db: Kysely<Tables>, dialect: Dialect, accountId: string, ids: readonly string[]) {
  return withStates(db).where(accountOfKeyedRows(dialect, "c.account_id"), "=", accountId).where(keyIn(dialect, "c.id", ids));
}

/** Several checks' read on PostgreSQL, its ids one array parameter: built and compiled once (see keyIn). */
const withStatesByIdArray = preparedQuery((db: Kysely<Tables>, accountId: string, ids: readonly string[]) => withStatesByIds(db, "postgres", accountId, ids));

/** A single check's read: built and compiled once (see preparedQuery). */
const withStateById = preparedQuery((db: Kysely<Tables>, accountId: string, id: string) =>
  withStates(db).where("c.account_id", "=", accountId).where("c.id", "=", id),
);

import { sql, type Kysely, type Selectable } from "kysely";
import type {
  CertificateType,
  CertificateUser,
  CheckMethod,
  CheckPurpose,
  CertificateOrigin,
  RevocationReasonCode,
  Status,
  StatusRecord,
  StoredCertificate,
} from "../domain/certificates/model.ts";
import type { CertificateStore, CertificateAndCurrentAuthVersion, StatusCursor } from "../domain/certificates/certificate-store.ts";
import { accountOfKeyedRows, keyIn, readByIds } from "./account-key-lookup.ts";
import { authVersionColumn, authVersionOf } from "./accounts-repository.ts";
import type { Database, Dialect } from "./database.ts";
import { groupedWrites, statementCalls, type StatementCalls } from "./coalesced-calls.ts";
import { distinctInChunks, maxParameters } from "./parameter-limit.ts";
import { preparedQuery } from "./prepared-query.ts";
import { insertStatusRecords } from "./status-rows.ts";
import type { CertificateStatusTable, CertificateTable, CertificateUserTable, Tables } from "./schema.ts";

/**
 * The columns a StoredCertificate is made of. Status checks read these and
 * not the certificate's PEM (most of a row's bytes, kept in overflow pages on
 * SQLite) or its subject, which no check uses.
 */
export const certificateColumns = [
  "id", "account_id", "user_id", "type", "origin", "serial_number", "issuer", "not_before", "not_after",
  "fingerprint_sha256", "crl_distribution_points", "ocsp_urls", "trust_anchor", "created_at",
] as const satisfies readonly (keyof CertificateTable)[];

type CertificateRow = Pick<Selectable<CertificateTable>, (typeof certificateColumns)[number]>;

/** The account's certificates with these ids, found by primary key (see accountOfKeyedRows). Exported for the plan's test. */
export function certificatesByIds(db: Kysely<Tables>, dialect: Dialect, accountId: string, ids: readonly string[]) {
  return db
    .selectFrom("certificates")
    .select(certificateColumns)
    .select(authVersionColumn)
    .where(accountOfKeyedRows(dialect, "account_id"), "=", accountId)
    .where(keyIn(dialect, "id", ids));
}

/** Several checks' read on PostgreSQL, its ids one array parameter: built and compiled once (see keyIn). */
const certificatesByIdArray = preparedQuery((db: Kysely<Tables>, accountId: string, ids: readonly string[]) => certificatesByIds(db, "postgres", accountId, ids));

/** The account's users with these ids, found by primary key (see accountOfKeyedRows). Exported for the plan's test. */
export function usersByIds(db: Kysely<Tables>, dialect: Dialect, accountId: string, ids: readonly string[]) {
  return db.selectFrom("certificate_users").selectAll().where(accountOfKeyedRows(dialect, "account_id"), "=", accountId).where(keyIn(dialect, "id", ids));
}

/** A single check's read (every call on SQLite, a lone call on PostgreSQL): built and compiled once (see preparedQuery). */
const certificateById = preparedQuery((db: Kysely<Tables>, accountId: string, id: string) =>
  db.selectFrom("certificates").select(certificateColumns).select(authVersionColumn).where("account_id", "=", accountId).where("id", "=", id),
);

/** Single checks' records one grouped insert takes: its SQL stays short enough to be kept prepared. */
const statusGroupRows = 64;

interface CertificateKey {
  accountId: string;
  certificateId: string;
}

/** Certificates' rows read by id, and the auth version read with them (undefined when no row came back). */
interface CertificatesRead {
  found: Map<string, CertificateRow>;
  authVersion: number | undefined;
}

/**
 * Every read takes the account id: rows of other accounts are invisible, not
 * forbidden. The "many" methods serve batch checks: one statement however many
 * ids (up to the parameter limit, beyond which they split), and results keyed
 * by id so callers keep their own order.
 */
export class CertificatesRepository implements CertificateStore {
  private readonly certificateReads: StatementCalls<CertificateKey, CertificateAndCurrentAuthVersion>;
  private readonly statusWrites: StatementCalls<StatusRecord, void>;

  constructor(private readonly database: Database) {
    this.certificateReads = statementCalls(database.dialect, (keys) => this.readTogether(keys), maxParameters - 1);
    this.statusWrites = groupedWrites(database.dialect, (records) => this.insertStatuses(records), statusGroupRows);
  }

  async insertUser(user: CertificateUser): Promise<void> {
    await this.database.db
      .insertInto("certificate_users")
      .values({ id: user.id, account_id: user.accountId, created_at: user.createdAt })
      .execute();
  }

  async findUser(accountId: string, userId: string): Promise<CertificateUser | undefined> {
    const row = await this.database.db
      .selectFrom("certificate_users")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", userId)
      .executeTakeFirst();
    return row && toUser(row);
  }

  async findUsers(accountId: string, userIds: readonly string[]): Promise<Map<string, CertificateUser>> {
    const found = new Map<string, CertificateUser>();
    for (const ids of distinctInChunks(userIds, 1)) {
      const rows = await usersByIds(this.database.db, this.database.dialect, accountId, ids).execute();
      for (const row of rows) found.set(row.id, toUser(row));
    }
    return found;
  }

  async insertCertificate(c: StoredCertificate): Promise<void> {
    await this.database.db.insertInto("certificates").values(certificateRow(c)).execute();
  }

  /**
   * Inserts unless the account already has a certificate with this
   * fingerprint; true when this call inserted it. The caller re-reads the
   * winner when two calls race.
   */
  async insertCertificateIfAbsent(c: StoredCertificate): Promise<boolean> {
    const result = await this.database.db
      .insertInto("certificates")
      .values(certificateRow(c))
      .onConflict((oc) => oc.columns(["account_id", "fingerprint_sha256"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async findCertificateByFingerprint(accountId: string, fingerprintSha256: string): Promise<StoredCertificate | undefined> {
    const row = await this.database.db
      .selectFrom("certificates")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("fingerprint_sha256", "=", fingerprintSha256)
      .executeTakeFirst();
    return row && toCertificate(row);
  }

  /** The user of the account's certificate with one of these fingerprints (of the latest such certificate), if any. */
  async findUserByFingerprints(accountId: string, fingerprints: readonly string[]): Promise<CertificateUser | undefined> {
    if (fingerprints.length === 0) return undefined;
    const row = await this.database.db
      .selectFrom("certificates as c")
      .innerJoin("certificate_users as u", "u.id", "c.user_id")
      .select(["u.id", "u.account_id", "u.created_at"])
      .where("c.account_id", "=", accountId)
      .where("c.fingerprint_sha256", "in", [...fingerprints])
      .orderBy("c.not_before", "desc")
      .orderBy("c.created_at", "desc")
      .limit(1)
      .executeTakeFirst();
    return row && { id: row.id, accountId: row.account_id, createdAt: Number(row.created_at) };
  }

  async setCertificateUser(accountId: string, certificateId: string, userId: string): Promise<void> {
    await this.database.db
      .updateTable("certificates")
      .set({ user_id: userId })
      .where("account_id", "=", accountId)
      .where("id", "=", certificateId)
      .execute();
  }

  /** Removes a user that owns nothing: one created for a certificate another call registered first. */
  async deleteUserWithoutCertificates(accountId: string, userId: string): Promise<void> {
    await this.database.db
      .deleteFrom("certificate_users")
      .where("account_id", "=", accountId)
      .where("id", "=", userId)
      .where((eb) => eb.not(eb.exists(eb.selectFrom("certificates").select("id").where("user_id", "=", userId))))
      .execute();
  }

  /** On PostgreSQL, read in one statement with the certificates asked for by the calls made at the same time (see CoalescedCalls). */
  async findCertificate(accountId: string, certificateId: string): Promise<StoredCertificate | undefined> {
    return (await this.certificateReads.call({ accountId, certificateId })).certificate;
  }

  /** findCertificate, and the auth version read in the same statement (see authVersionColumn). */
  findCertificateAndCurrentAuthVersion(accountId: string, certificateId: string): Promise<CertificateAndCurrentAuthVersion> {
    return this.certificateReads.call({ accountId, certificateId });
  }

  /** One statement per account among the calls, side by side; every call gets an object of its own. */
  private async readTogether(keys: readonly CertificateKey[]): Promise<PromiseSettledResult<CertificateAndCurrentAuthVersion>[]> {
    const idsByAccount = new Map<string, Set<string>>();
    for (const { accountId, certificateId } of keys) idsByAccount.set(accountId, (idsByAccount.get(accountId) ?? new Set()).add(certificateId));
    const accounts = [...idsByAccount.keys()];
    const reads = await Promise.allSettled(accounts.map((accountId) => this.certificatesById(accountId, [...idsByAccount.get(accountId)!])));
    const byAccount = new Map(accounts.map((accountId, i) => [accountId, reads[i]!]));
    return keys.map(({ accountId, certificateId }) => {
      const read = byAccount.get(accountId)!;
      if (read.status === "rejected") return read;
      return { status: "fulfilled", value: { certificate: certificateOf(read.value.found.get(certificateId)), authVersion: read.value.authVersion } };
    });
  }

  /** The account's certificates with these ids (at most the parameter limit less one), in one statement. */
  private async certificatesById(accountId: string, ids: readonly string[]): Promise<CertificatesRead> {
    const db = this.database.db;
    const rows = await readByIds(this.database.dialect, ids, {
      one: (id) => certificateById(db, accountId, id),
      array: (all) => certificatesByIdArray(db, accountId, all),
      list: (all) => certificatesByIds(db, "sqlite", accountId, all).execute(),
    });
    return { found: new Map(rows.map((row) => [row.id, row])), authVersion: authVersionOf(rows) };
  }

  /** The same read as a single check's, a slice of ids at a time. */
  async findCertificates(accountId: string, certificateIds: readonly string[]): Promise<Map<string, StoredCertificate>> {
    const found = new Map<string, StoredCertificate>();
    for (const ids of distinctInChunks(certificateIds, 1)) {
      for (const [id, row] of (await this.certificatesById(accountId, ids)).found) found.set(id, toCertificate(row));
    }
    return found;
  }

  /** The user's latest certificate (latest notBefore, then most recently stored), optionally of one type (findLatestCertificates picks the same way: change both together). */
  async findLatestCertificate(accountId: string, userId: string, type?: CertificateType): Promise<StoredCertificate | undefined> {
    let query = this.database.db
      .selectFrom("certificates")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("user_id", "=", userId);
    if (type) query = query.where("type", "=", type);
    const row = await query.orderBy("not_before", "desc").orderBy("created_at", "desc").orderBy("id", "desc").limit(1).executeTakeFirst();
    return row && toCertificate(row);
  }

  /**
   * findLatestCertificate for many users at once, in the same order (latest
   * notBefore, newest created_at, then highest id): each user's first row by that order, picked
   * by the database so that only one certificate per user comes back.
   */
  async findLatestCertificates(
    accountId: string,
    userIds: readonly string[],
    type?: CertificateType,
  ): Promise<Map<string, StoredCertificate>> {
    const found = new Map<string, StoredCertificate>();
    for (const ids of distinctInChunks(userIds, 2)) {
      let ranked = this.database.db
        .selectFrom("certificates")
        .selectAll()
        .select((eb) =>
          eb.fn
            .agg<number>("row_number")
            .over((ob) => ob.partitionBy("user_id").orderBy("not_before", "desc").orderBy("created_at", "desc").orderBy("id", "desc"))
            .as("latest_rank"),
        )
        .where("account_id", "=", accountId)
        .where("user_id", "in", ids);
      if (type) ranked = ranked.where("type", "=", type);
      const rows = await this.database.db.selectFrom(ranked.as("ranked")).selectAll().where("latest_rank", "=", 1).execute();
      for (const row of rows) found.set(row.user_id, toCertificate(row));
    }
    return found;
  }

  async listCertificates(accountId: string): Promise<StoredCertificate[]> {
    const rows = await this.database.db
      .selectFrom("certificates")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("created_at")
      .execute();
    return rows.map(toCertificate);
  }

  /** Committed before it resolves, in one insert with the records of the checks that ran at the same time (see groupedWrites). */
  insertStatus(s: StatusRecord): Promise<void> {
    return this.statusWrites.call(s);
  }

  /**
   * Many records in one multi-row insert (more only past the parameter
   * limit), in the order of their certificates' ids. Each row's trigger
   * locks its certificate's head until the insert commits (PostgreSQL), so
   * two inserts that met the same certificates in opposite orders (a batch
   * and a group of single checks, two batches) deadlocked, and PostgreSQL
   * failed one of them. In one order, the second waits for the first.
   * The sort is stable: a certificate's records keep the order they came in,
   * which is their order in its history.
   */
  async insertStatuses(records: readonly StatusRecord[]): Promise<void> {
    await insertStatusRecords(this.database.db, records);
  }

  async findStatus(accountId: string, statusId: string): Promise<StatusRecord | undefined> {
    const row = await this.database.db
      .selectFrom("certificate_statuses")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", statusId)
      .executeTakeFirst();
    return row && toStatus(row);
  }

  /**
   * Newest first: the certificate's chain (migration 0024) walked from its
   * head, or from the record before the cursor, `limit` records at most, in
   * one statement. The walk stays within the account's records of this
   * certificate, so a cursor naming any other record gives an empty page.
   */
  async listStatuses(accountId: string, certificateId: string, limit: number, after?: StatusCursor): Promise<StatusRecord[]> {
    const start = after
      ? sql`select previous_id, 1 from certificate_statuses
          where id = ${after.id} and account_id = ${accountId} and certificate_id = ${certificateId} and previous_id is not null`
      : sql`select status_id, 1 from certificate_status_heads where certificate_id = ${certificateId}`;
    const { rows } = await sql<Selectable<CertificateStatusTable>>`
      with recursive chain (id, depth) as (
        ${start}
        union all
        select s.previous_id, chain.depth + 1 from chain join certificate_statuses s on s.id = chain.id
        where chain.depth < ${limit} and s.previous_id is not null
      )
      select s.* from chain join certificate_statuses s on s.id = chain.id
      where s.account_id = ${accountId} and s.certificate_id = ${certificateId}
      order by chain.depth`.execute(this.database.db);
    return rows.map(toStatus);
  }

  async countStatuses(accountId: string): Promise<number> {
    const row = await this.database.db
      .selectFrom("certificate_statuses")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("account_id", "=", accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

function certificateRow(c: StoredCertificate) {
  return {
    id: c.id,
    account_id: c.accountId,
    user_id: c.userId,
    type: c.type,
    origin: c.origin,
    serial_number: c.serialNumber,
    issuer: c.issuer,
    // Not kept (see migration 0011): the columns stay for older rows' sake.
    subject: "",
    certificate_pem: "",
    not_before: c.notBefore,
    not_after: c.notAfter,
    fingerprint_sha256: c.fingerprintSha256,
    crl_distribution_points: JSON.stringify(c.crlDistributionPoints),
    ocsp_urls: JSON.stringify(c.ocspUrls),
    trust_anchor: c.trustAnchor,
    created_at: c.createdAt,
  };
}

function toUser(row: Selectable<CertificateUserTable>): CertificateUser {
  return { id: row.id, accountId: row.account_id, createdAt: Number(row.created_at) };
}

function certificateOf(row: CertificateRow | undefined): StoredCertificate | undefined {
  return row && toCertificate(row);
}

export function toCertificate(row: CertificateRow): StoredCertificate {
  return {
    id: row.id,
    accountId: row.account_id,
    userId: row.user_id,
    type: row.type as CertificateType,
    origin: row.origin as CertificateOrigin,
    serialNumber: row.serial_number,
    issuer: row.issuer,
    notBefore: Number(row.not_before),
    notAfter: Number(row.not_after),
    fingerprintSha256: row.fingerprint_sha256,
    crlDistributionPoints: JSON.parse(row.crl_distribution_points) as string[],
    ocspUrls: row.ocsp_urls === null ? [] : (JSON.parse(row.ocsp_urls) as string[]),
    trustAnchor: row.trust_anchor,
    createdAt: Number(row.created_at),
  };
}

function toStatus(row: Selectable<CertificateStatusTable>): StatusRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    certificateId: row.certificate_id,
    status: row.status as Status,
    checkMethod: row.check_method as CheckMethod,
    checkPurpose: row.check_purpose as CheckPurpose,
    sourceUpdatedAt: Number(row.source_updated_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    revokedReason: row.revoked_reason === null ? null : (Number(row.revoked_reason) as RevocationReasonCode),
    createdAt: Number(row.created_at),
  };
}

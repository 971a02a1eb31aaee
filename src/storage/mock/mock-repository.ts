import type { CheckMethod, RevocationReasonCode, Status } from "../../domain/certificates/model.ts";
import type { Kysely, Selectable } from "kysely";
import type { MockAuthorityRow, MockCertificateState, MockStore } from "../../domain/mock/mock-store.ts";
import type { Database } from "../database.ts";
import { distinctInChunks } from "../parameter-limit.ts";
import type { MockCertificateStateTable, Tables } from "../schema.ts";

export class MockRepository implements MockStore {
  constructor(private readonly database: Database) {}

  async findAuthority(id: string): Promise<MockAuthorityRow | undefined> {
    const row = await this.database.db.selectFrom("mock_authorities").selectAll().where("id", "=", id).executeTakeFirst();
    return row && { id: row.id, certificatePem: row.certificate_pem, privateKeyPem: row.private_key_pem, createdAt: Number(row.created_at) };
  }

  /** Replaces the material kept under this id (a renewed OCSP responder certificate). */
  async replaceAuthority(row: MockAuthorityRow): Promise<void> {
    await this.database.db
      .updateTable("mock_authorities")
      .set({ certificate_pem: row.certificatePem, private_key_pem: row.privateKeyPem, created_at: row.createdAt })
      .where("id", "=", row.id)
      .execute();
  }

  /** The mock CA's current CRL issue: its cRLNumber and thisUpdate (null: no change since the CA was made). */
  async crlIssue(id: string): Promise<{ crlNumber: number; thisUpdate: number | null; createdAt: number } | undefined> {
    const row = await this.database.db
      .selectFrom("mock_authorities")
      .select(["crl_number", "crl_this_update", "created_at"])
      .where("id", "=", id)
      .executeTakeFirst();
    return row && { crlNumber: Number(row.crl_number), thisUpdate: row.crl_this_update === null ? null : Number(row.crl_this_update), createdAt: Number(row.created_at) };
  }

  /** A new CRL issue: the next cRLNumber, in one statement so that concurrent changes each get their own. */
  async nextCrlIssue(id: string, thisUpdate: number): Promise<void> {
    await this.database.db
      .updateTable("mock_authorities")
      .set((eb) => ({ crl_number: eb("crl_number", "+", 1), crl_this_update: thisUpdate }))
      .where("id", "=", id)
      .execute();
  }

  /**
   * What the mock OCSP responder says of these serial numbers: the mock
   * certificates with them (of any account) and their states (null: never
   * set); a serial the mock CA never issued is missing from the map.
   */
  async findStatesBySerials(serialNumbers: readonly string[]): Promise<Map<string, MockCertificateState | null>> {
    const found = new Map<string, MockCertificateState | null>();
    for (const chunk of distinctInChunks(serialNumbers, 1)) {
      const rows = await mockStatesBySerials(this.database.db, chunk).execute();
      for (const row of rows) found.set(row.serial_number, row.certificate_id === null ? null : toState(row as Selectable<MockCertificateStateTable>));
    }
    return found;
  }

  /** Inserts unless another instance got there first; the caller re-reads to learn which one won. */
  async insertAuthorityIfAbsent(row: MockAuthorityRow): Promise<void> {
    await this.database.db
      .insertInto("mock_authorities")
      .values({ id: row.id, certificate_pem: row.certificatePem, private_key_pem: row.privateKeyPem, created_at: row.createdAt })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
  }

  async findState(certificateId: string): Promise<MockCertificateState | undefined> {
    const row = await this.database.db
      .selectFrom("mock_certificate_states")
      .selectAll()
      .where("certificate_id", "=", certificateId)
      .executeTakeFirst();
    return row && toState(row);
  }

  /** The states of many certificates in one read (split only past the parameter limit); absent ones are missing from the map. */
  async findStates(certificateIds: readonly string[]): Promise<Map<string, MockCertificateState>> {
    const found = new Map<string, MockCertificateState>();
    for (const ids of distinctInChunks(certificateIds, 0)) {
      const rows = await this.database.db
        .selectFrom("mock_certificate_states")
        .selectAll()
        .where("certificate_id", "in", ids)
        .execute();
      for (const row of rows) found.set(row.certificate_id, toState(row));
    }
    return found;
  }

  /**
   * What checks report for certificates of the mock CA registered by
   * fingerprint, in one read: the state set on the mock certificate with each
   * fingerprint, in whichever account created it; keyed by fingerprint.
   */
  async findStatesByFingerprints(fingerprints: readonly string[]): Promise<Map<string, MockCertificateState>> {
    const found = new Map<string, MockCertificateState>();
    for (const chunk of distinctInChunks(fingerprints, 1)) {
      const rows = await this.database.db
        .selectFrom("certificates as c")
        .innerJoin("mock_certificate_states as s", "s.certificate_id", "c.id")
        .selectAll("s")
        .select("c.fingerprint_sha256")
        .where("c.origin", "=", "mock")
        .where("c.fingerprint_sha256", "in", chunk)
        .execute();
      for (const row of rows) found.set(row.fingerprint_sha256, toState(row));
    }
    return found;
  }

  /**
   * The fingerprints of the mock certificates issued to the same mock person
   * (the same user of the same account) as the mock certificate with this
   * fingerprint, itself included; none for a certificate the mock did not issue.
   */
  async samePersonFingerprints(fingerprintSha256: string): Promise<string[]> {
    const rows = await this.database.db
      .selectFrom("certificates as c")
      .innerJoin("certificates as other", (join) =>
        join.onRef("other.account_id", "=", "c.account_id").onRef("other.user_id", "=", "c.user_id"),
      )
      .select("other.fingerprint_sha256")
      .where("c.origin", "=", "mock")
      .where("other.origin", "=", "mock")
      .where("c.fingerprint_sha256", "=", fingerprintSha256)
      .execute();
    return rows.map((r) => r.fingerprint_sha256);
  }

  /** Serial numbers of every revoked mock certificate, of every account: the mock CA's CRL lists them all. */
  async listRevoked(): Promise<{ serialNumber: string; revokedAt: number; revokedReason: RevocationReasonCode }[]> {
    const rows = await this.database.db
      .selectFrom("mock_certificate_states as s")
      .innerJoin("certificates as c", "c.id", "s.certificate_id")
      .select(["c.serial_number", "s.revoked_at", "s.revoked_reason", "s.updated_at"])
      .where("s.status", "=", "revoked")
      .orderBy("c.serial_number")
      .execute();
    return rows.map((r) => ({
      serialNumber: r.serial_number,
      revokedAt: Number(r.revoked_at ?? r.updated_at),
      revokedReason: Number(r.revoked_reason ?? 0) as RevocationReasonCode,
    }));
  }

  async saveState(state: MockCertificateState): Promise<void> {
    const values = {
      status: state.status,
      revoked_at: state.revokedAt,
      revoked_reason: state.revokedReason,
      source_updated_at: state.sourceUpdatedAt,
      updated_at: state.updatedAt,
      offered_methods: state.offeredMethods === null ? null : JSON.stringify(state.offeredMethods),
    };
    await this.database.db
      .insertInto("mock_certificate_states")
      .values({ certificate_id: state.certificateId, ...values })
      .onConflict((oc) => oc.column("certificate_id").doUpdateSet(values))
      .execute();
  }
}

function toState(row: Selectable<MockCertificateStateTable>): MockCertificateState {
  return {
    certificateId: row.certificate_id,
    status: row.status as Status,
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    revokedReason: row.revoked_reason === null ? null : (Number(row.revoked_reason) as RevocationReasonCode),
    sourceUpdatedAt: row.source_updated_at === null ? null : Number(row.source_updated_at),
    updatedAt: Number(row.updated_at),
    offeredMethods: row.offered_methods === null ? null : (JSON.parse(row.offered_methods) as CheckMethod[]),
  };
}

/** The mock certificates with these serial numbers, of any account, with their states (found by the serial number index). Exported for the plan's test. */
export function mockStatesBySerials(db: Kysely<Tables>, serialNumbers: readonly string[]) {
  return db
    .selectFrom("certificates as c")
    .leftJoin("mock_certificate_states as s", "s.certificate_id", "c.id")
    .selectAll("s")
    .select("c.serial_number")
    .where("c.origin", "=", "mock")
    .where("c.serial_number", "in", serialNumbers);
}

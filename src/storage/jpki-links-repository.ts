import type { Kysely, Selectable } from "kysely";
import type { CertificateType } from "../domain/certificates/model.ts";
import type { JpkiLinkRow, JpkiLinkStore, LinkStatus } from "../domain/oidc/jpki/model.ts";
import type { Database } from "./database.ts";
import { preparedQuery } from "./prepared-query.ts";
import type { OidcJpkiLinkTable, Tables } from "./schema.ts";

/** Named rather than `*`, so that SQLite's rows are built in JavaScript (see withRowBuilder). */
const linkColumns = [
  "certificate_id", "user_id", "fingerprint_sha256", "certificate_type", "not_after", "status", "linked_at", "checked_at",
] as const satisfies readonly (keyof OidcJpkiLinkTable)[];

/** A user's links, read by every ID token of a user who has any (see preparedQuery). */
const linksOfUser = preparedQuery((db: Kysely<Tables>, userId: string) =>
  db.selectFrom("oidc_jpki_links").select(linkColumns).where("user_id", "=", userId).orderBy("linked_at").orderBy("certificate_id"),
);

/** Certificates linked to end users. */
export class JpkiLinksRepository implements JpkiLinkStore {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async insertLinkIfAbsent(link: JpkiLinkRow): Promise<boolean> {
    const result = await this.db
      .insertInto("oidc_jpki_links")
      .values({
        certificate_id: link.certificateId,
        user_id: link.userId,
        fingerprint_sha256: link.fingerprintSha256,
        certificate_type: link.type,
        not_after: link.notAfter,
        status: link.status,
        linked_at: link.linkedAt,
        checked_at: link.checkedAt,
      })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async findLinkByFingerprint(fingerprintSha256: string): Promise<JpkiLinkRow | undefined> {
    const row = await this.db.selectFrom("oidc_jpki_links").selectAll().where("fingerprint_sha256", "=", fingerprintSha256).executeTakeFirst();
    return row && toLink(row);
  }

  async listLinks(userId: string): Promise<JpkiLinkRow[]> {
    return (await linksOfUser(this.db, userId)).map(toLink);
  }

  async updateLinkStatus(certificateId: string, status: LinkStatus, checkedAt: number): Promise<void> {
    await this.db.updateTable("oidc_jpki_links").set({ status, checked_at: checkedAt }).where("certificate_id", "=", certificateId).execute();
  }

  async deleteLink(userId: string, certificateId: string): Promise<boolean> {
    const result = await this.db.deleteFrom("oidc_jpki_links").where("certificate_id", "=", certificateId).where("user_id", "=", userId).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}

function toLink(row: Selectable<OidcJpkiLinkTable>): JpkiLinkRow {
  return {
    certificateId: row.certificate_id,
    userId: row.user_id,
    fingerprintSha256: row.fingerprint_sha256,
    type: row.certificate_type as CertificateType,
    notAfter: Number(row.not_after),
    status: row.status as LinkStatus,
    linkedAt: Number(row.linked_at),
    checkedAt: Number(row.checked_at),
  };
}

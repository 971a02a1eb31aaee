import type { StatusRecord } from "../src/domain/certificates/model.ts";
import { newId } from "../src/domain/ids.ts";
import { CertificatesRepository } from "../src/storage/certificates-repository.ts";
import { openDatabase } from "../src/storage/database.ts";
import { MockRepository } from "../src/storage/mock-repository.ts";

/**
 * count certificate ids of the demo account for the batch scenario: the three
 * the demo seeded, then copies of one's row under new ids (issuing 1,000 real
 * certificates would take minutes and measures nothing here), one in ten
 * revoked so that the mock source's read finds states. Then `history` status
 * records spread over them, so that the single and the batch scenario both
 * write into tables of a realistic size (index upkeep grows with them) rather
 * than whichever runs first getting the smaller table.
 */
export async function seedBatchCertificates(databaseUrl: string, templateId: string, count: number, history: number): Promise<string[]> {
  const database = await openDatabase(databaseUrl);
  try {
    const repository = new CertificatesRepository(database);
    const mock = new MockRepository(database);
    const account = await database.db.selectFrom("accounts").select("id").where("name", "=", "demo").executeTakeFirstOrThrow();
    const existing = await repository.listCertificates(account.id);
    const template = existing.find((c) => c.id === templateId);
    if (!template) throw new Error(`certificate ${templateId} is not the demo account's`);
    const ids = existing.map((c) => c.id).slice(0, count);
    const now = Date.now();
    while (ids.length < count) {
      // Distinct fingerprints: one account registers a certificate once.
      const copy = { ...template, id: newId(), fingerprintSha256: `${ids.length}`.padStart(64, "0") };
      await repository.insertCertificate(copy);
      if (ids.length % 10 === 0) {
        await mock.saveState({
          certificateId: copy.id,
          status: "revoked",
          revokedAt: now,
          revokedReason: 1,
          sourceUpdatedAt: null,
          updatedAt: now,
          offeredMethods: null,
        });
      }
      ids.push(copy.id);
    }
    for (let written = 0; written < history; ) {
      const records = Array.from({ length: Math.min(3000, history - written) }, (_, i): StatusRecord => ({
        id: newId(),
        accountId: account.id,
        certificateId: ids[(written + i) % count]!,
        status: "good",
        checkMethod: "crl",
        checkPurpose: "liveness_check",
        sourceUpdatedAt: now,
        revokedAt: null,
        revokedReason: null,
        createdAt: now - history + written + i,
      }));
      await repository.insertStatuses(records);
      written += records.length;
    }
    return ids;
  } finally {
    await database.close();
  }
}

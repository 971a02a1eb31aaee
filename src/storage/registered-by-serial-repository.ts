import { setImmediate } from "node:timers/promises";
import type { Status } from "../domain/certificates/model.ts";
import type { RegisteredBySerial, RegisteredCertificate } from "../domain/certificates/crl/list-changes.ts";
import { certificateColumns, toCertificate } from "./certificates-repository.ts";
import type { Database } from "./database.ts";
import { chunked } from "./parameter-limit.ts";

/**
 * Serials one statement looks up. On SQLite a statement runs on the event
 * loop's thread: five hundred index probes keep each one to a few
 * milliseconds, however many serials a new list changes.
 */
const serialsPerStatement = 500;

/** Every account's certificates by trust anchor and serial number (through the serial number index of migration 0023), with their newest status (the chain's head carries it, migration 0036). */
export class RegisteredBySerialRepository implements RegisteredBySerial {
  constructor(private readonly database: Database) {}

  async findBySerials(trustAnchor: string, serialNumbers: readonly string[]): Promise<RegisteredCertificate[]> {
    const found: RegisteredCertificate[] = [];
    for (const serials of chunked([...new Set(serialNumbers)], serialsPerStatement)) {
      const rows = await this.database.db
        .selectFrom("certificates as c")
        .leftJoin("certificate_status_heads as h", "h.certificate_id", "c.id")
        .select(certificateColumns.map((column) => `c.${column}` as const))
        .select("h.status as head_status")
        .where("c.trust_anchor", "=", trustAnchor)
        .where("c.serial_number", "in", serials)
        .execute();
      for (const row of rows) found.push({ certificate: toCertificate(row), status: (row.head_status ?? undefined) as Status | undefined });
      // better-sqlite3 answers synchronously: a turn of the event loop between statements, for timers and sockets.
      await setImmediate();
    }
    return found;
  }
}

import { sql, type Kysely } from "kysely";
import {
  responseKey,
  type OcspResponseKey,
  type OcspResponseStore,
  type StoredOcspResponse,
} from "../domain/certificates/ocsp/ocsp-response-store.ts";
import type { Database } from "./database.ts";
import { chunked, maxParameters } from "./parameter-limit.ts";
import { preparedQuery } from "./prepared-query.ts";
import type { OcspResponseTable, Tables } from "./schema.ts";

function stored(row: OcspResponseTable): StoredOcspResponse {
  return {
    issuerAnchor: row.issuer_anchor,
    serialNumber: row.serial_number,
    url: row.url,
    // A plain view of the driver's buffer, made for this row: nothing else writes it, so it is not copied.
    der: new Uint8Array(row.der.buffer, row.der.byteOffset, row.der.byteLength),
    sha256: row.sha256,
    producedAt: Number(row.produced_at),
    thisUpdate: Number(row.this_update),
    nextUpdate: row.next_update === null ? undefined : Number(row.next_update),
    usableUntil: Number(row.usable_until),
    fetchedAt: Number(row.fetched_at),
  };
}

/** A single check's read, of the one certificate's response: built and compiled once (see preparedQuery). */
const responseByKey = preparedQuery((db: Kysely<Tables>, issuerAnchor: string, serialNumber: string) =>
  db.selectFrom("ocsp_responses").selectAll().where("issuer_anchor", "=", issuerAnchor).where("serial_number", "=", serialNumber),
);

/** The shared OCSP responses (migration 0014). */
export class OcspResponsesRepository implements OcspResponseStore {
  constructor(private readonly database: Database) {}

  /** One statement (split only past the parameter limit): per anchor, the serial numbers asked for. */
  async findMany(keys: readonly OcspResponseKey[]): Promise<Map<string, StoredOcspResponse>> {
    const found = new Map<string, StoredOcspResponse>();
    if (keys.length === 1) {
      const [row] = await responseByKey(this.database.db, keys[0]!.issuerAnchor, keys[0]!.serialNumber);
      if (row) found.set(responseKey(keys[0]!), stored(row));
      return found;
    }
    const unique = [...new Map(keys.map((k) => [responseKey(k), k])).values()];
    for (const slice of chunked(unique, Math.floor(maxParameters / 2))) {
      const byAnchor = new Map<string, string[]>();
      for (const k of slice) {
        const serials = byAnchor.get(k.issuerAnchor);
        if (serials) serials.push(k.serialNumber);
        else byAnchor.set(k.issuerAnchor, [k.serialNumber]);
      }
      const rows = await this.database.db
        .selectFrom("ocsp_responses")
        .selectAll()
        .where((eb) => eb.or([...byAnchor].map(([anchor, serials]) => eb.and([eb("issuer_anchor", "=", anchor), eb("serial_number", "in", serials)]))))
        .execute();
      for (const row of rows) {
        const response = stored(row);
        found.set(responseKey(response), response);
      }
    }
    return found;
  }

  async forget(key: OcspResponseKey): Promise<void> {
    await this.database.db
      .deleteFrom("ocsp_responses")
      .where("issuer_anchor", "=", key.issuerAnchor)
      .where("serial_number", "=", key.serialNumber)
      .execute();
  }

  /** One statement, so that of two instances saving at once the later response wins whatever the order. */
  async save(response: StoredOcspResponse): Promise<void> {
    const values = {
      issuer_anchor: response.issuerAnchor,
      serial_number: response.serialNumber,
      url: response.url,
      der: Buffer.from(response.der.buffer, response.der.byteOffset, response.der.byteLength),
      sha256: response.sha256,
      produced_at: response.producedAt,
      this_update: response.thisUpdate,
      next_update: response.nextUpdate ?? null,
      usable_until: response.usableUntil,
      fetched_at: response.fetchedAt,
    };
    await this.database.db
      .insertInto("ocsp_responses")
      .values(values)
      .onConflict((oc) =>
        oc
          .columns(["issuer_anchor", "serial_number"])
          .doUpdateSet(values)
          .where(sql<boolean>`excluded.this_update >= ocsp_responses.this_update`),
      )
      .execute();
  }
}

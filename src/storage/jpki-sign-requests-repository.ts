import type { Selectable } from "kysely";
import type {
  SignRequestCertificateKind,
  SignRequestPurpose,
  SignRequestRefusal,
  SignRequestRow,
  SignRequestState,
  SignRequestStore,
} from "../domain/oidc/jpki/sign-requests.ts";
import type { Database } from "./database.ts";
import type { OidcJpkiSignRequestTable } from "./schema.ts";

/** Named rather than `*`, so that SQLite's rows are built in JavaScript (see withRowBuilder). */
const columns = [
  "id_hash", "browser_hash", "purpose", "challenge", "certificate_kind", "client_name", "binding_code_sealed",
  "state", "refusal", "answer_sealed", "pin_attempts_remaining", "basic_info_consent_at", "created_at", "expires_at",
] as const satisfies readonly (keyof OidcJpkiSignRequestTable)[];

/**
 * Signing requests for JPKI apps. Each change of state is one conditional
 * UPDATE whose row count says who moved it, so of two concurrent answers (or
 * two takes by the browser) exactly one wins, on SQLite and PostgreSQL alike.
 */
export class JpkiSignRequestsRepository implements SignRequestStore {
  constructor(private readonly database: Database) {}

  async insertSignRequest(row: SignRequestRow): Promise<void> {
    await this.database.db
      .insertInto("oidc_jpki_sign_requests")
      .values({
        id_hash: row.idHash,
        browser_hash: row.browserHash,
        purpose: row.purpose,
        challenge: row.challenge,
        certificate_kind: row.certificateKind,
        client_name: row.clientName,
        binding_code_sealed: row.bindingCodeSealed,
        state: row.state,
        refusal: row.refusal,
        answer_sealed: row.answerSealed,
        pin_attempts_remaining: row.pinAttemptsRemaining,
        basic_info_consent_at: row.basicInfoConsentAt,
        created_at: row.createdAt,
        expires_at: row.expiresAt,
      })
      .execute();
  }

  async findSignRequest(idHash: string): Promise<SignRequestRow | undefined> {
    const row = await this.database.db.selectFrom("oidc_jpki_sign_requests").select(columns).where("id_hash", "=", idHash).executeTakeFirst();
    return row && toRow(row);
  }

  async settleSignRequest(
    idHash: string,
    now: number,
    outcome: { state: "answered"; answerSealed: string } | { state: "refused"; refusal: SignRequestRefusal },
  ): Promise<boolean> {
    const result = await this.database.db
      .updateTable("oidc_jpki_sign_requests")
      .set(outcome.state === "answered" ? { state: "answered", answer_sealed: outcome.answerSealed } : { state: "refused", refusal: outcome.refusal })
      .where("id_hash", "=", idHash)
      .where("state", "=", "pending")
      .where("expires_at", ">", now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async reportPinAttempts(idHash: string, now: number, remaining: number): Promise<boolean> {
    const result = await this.database.db
      .updateTable("oidc_jpki_sign_requests")
      .set({ pin_attempts_remaining: remaining })
      .where("id_hash", "=", idHash)
      .where("state", "=", "pending")
      .where("expires_at", ">", now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async useSignRequest(idHash: string, browserHash: string, from: "answered" | "refused"): Promise<boolean> {
    const result = await this.database.db
      .updateTable("oidc_jpki_sign_requests")
      .set({ state: "used", answer_sealed: null })
      .where("id_hash", "=", idHash)
      .where("browser_hash", "=", browserHash)
      .where("state", "=", from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}

function toRow(row: Selectable<OidcJpkiSignRequestTable>): SignRequestRow {
  return {
    idHash: row.id_hash,
    browserHash: row.browser_hash,
    purpose: row.purpose as SignRequestPurpose,
    challenge: row.challenge,
    certificateKind: row.certificate_kind as SignRequestCertificateKind,
    clientName: row.client_name,
    bindingCodeSealed: row.binding_code_sealed,
    state: row.state as SignRequestState,
    refusal: row.refusal as SignRequestRefusal | null,
    answerSealed: row.answer_sealed,
    pinAttemptsRemaining: row.pin_attempts_remaining === null ? null : Number(row.pin_attempts_remaining),
    basicInfoConsentAt: row.basic_info_consent_at === null ? null : Number(row.basic_info_consent_at),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

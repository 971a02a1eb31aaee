import type { MockCardStore } from "../../domain/mock/mock-card.ts";
import type { Database } from "../database.ts";

/** The mock cards of end users (table oidc_mock_cards), sealed by MockCards. */
export class MockCardsRepository implements MockCardStore {
  constructor(private readonly database: Database) {}

  async insertCardIfAbsent(userId: string, cardSealed: string, now: number): Promise<void> {
    await this.database.db
      .insertInto("oidc_mock_cards")
      .values({ user_id: userId, card_sealed: cardSealed, created_at: now })
      .onConflict((oc) => oc.column("user_id").doNothing())
      .execute();
  }

  async findCard(userId: string): Promise<string | undefined> {
    const row = await this.database.db.selectFrom("oidc_mock_cards").select("card_sealed").where("user_id", "=", userId).executeTakeFirst();
    return row?.card_sealed;
  }
}

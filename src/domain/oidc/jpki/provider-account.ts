import type { Accounts } from "../../accounts/accounts.ts";
import { DomainError } from "../../errors.ts";

/**
 * The certificate account of the provider itself: the certificates its users
 * link and the verifications of their signatures are kept there, as for any
 * API account (history, status records, deletion). It is never given API
 * tokens. Made on first use; instances starting together agree on one.
 */
export const providerAccountName = "shomei-oidc";

export class ProviderAccount {
  private id: Promise<string> | undefined;

  constructor(private readonly accounts: Accounts) {}

  accountId(): Promise<string> {
    this.id ??= this.load().catch((error: unknown) => {
      this.id = undefined;
      throw error;
    });
    return this.id;
  }

  private async load(): Promise<string> {
    const existing = await this.find();
    if (existing) return existing;
    try {
      return (await this.accounts.create(providerAccountName, "not_started")).id;
    } catch (error) {
      // Another instance made it first.
      const winner = error instanceof DomainError && error.code === "account_exists" ? await this.find() : undefined;
      if (winner) return winner;
      throw error;
    }
  }

  private async find(): Promise<string | undefined> {
    try {
      return (await this.accounts.get(providerAccountName)).id;
    } catch (error) {
      if (error instanceof DomainError && error.code === "account_not_found") return undefined;
      throw error;
    }
  }
}

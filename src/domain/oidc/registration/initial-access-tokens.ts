import { randomUUID } from "node:crypto";
import type { Clock } from "../../clock.ts";
import { randomToken, sha256Hex } from "../flow/secrets.ts";
import { tokenMatches } from "./bearer-credential.ts";
import type { InitialAccessTokenStore, InitialAccessTokenSummary } from "./stores.ts";

/**
 * Initial access tokens (RFC 7591 section 3): what a client presents to
 * register itself when registration is by token. One may come from the
 * settings, as the SHA-256 of the token the operator chose; others are made
 * by `shomei client registration-token create`, shown once and kept as
 * their SHA-256. Each stays valid until revoked (the setting removed, or
 * `shomei client registration-token revoke`).
 */
export class InitialAccessTokens {
  constructor(
    private readonly store: InitialAccessTokenStore,
    private readonly clock: Clock,
    /** SHA-256 (hex) of the token set in the settings, if any. */
    private readonly configuredHash: string | undefined,
  ) {}

  /** A new token, returned once; only its hash is kept. */
  async create(name: string): Promise<{ token: string; summary: InitialAccessTokenSummary }> {
    const token = randomToken();
    const summary = { id: randomUUID(), name, createdAt: this.clock() };
    await this.store.insert({ ...summary, tokenHash: sha256Hex(token) });
    return { token, summary };
  }

  list(): Promise<InitialAccessTokenSummary[]> {
    return this.store.list();
  }

  revoke(id: string): Promise<boolean> {
    return this.store.remove(id);
  }

  /** Whether the token is the configured one (constant-time) or one made by the command (looked up by its hash). */
  async accepts(token: string): Promise<boolean> {
    if (tokenMatches(token, this.configuredHash)) return true;
    return this.store.exists(sha256Hex(token));
  }
}

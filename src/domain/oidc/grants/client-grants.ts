import type { GrantRow } from "../model.ts";
import type { GrantStore } from "../stores.ts";
import type { Clock } from "../../clock.ts";
import { OAuthError } from "../oauth-error.ts";

/**
 * Grants as their client sees them (OpenID Grant Management draft §6): a
 * client reaches only its own grants; another client's grant answers exactly
 * like an unknown one.
 */
export class ClientGrants {
  constructor(
    private readonly store: Pick<GrantStore, "findGrant" | "revokeGrant">,
    private readonly clock: Clock,
  ) {}

  find(id: string): Promise<GrantRow | undefined> {
    return this.store.findGrant(id);
  }

  /** The grant, when this client owns it; invalid_grant_id (404) otherwise. */
  async owned(id: string, clientId: string): Promise<GrantRow> {
    const grant = await this.store.findGrant(id);
    if (!grant || grant.clientId !== clientId) throw new OAuthError("invalid_grant_id", "no such grant for this client", { status: 404 });
    return grant;
  }

  /** Revokes the grant and every token issued under it. */
  revoke(id: string): Promise<void> {
    return this.store.revokeGrant(id, this.clock());
  }
}

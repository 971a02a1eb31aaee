import type { OidcClient } from "../../../src/domain/oidc/client.ts";
import type { ClientStore } from "../../../src/domain/oidc/stores.ts";
import { copied, InMemoryTables } from "./tables.ts";

/**
 * Client registrations in memory (src/storage/clients-repository.ts): saving
 * again replaces the registration but keeps when it was first made; removing
 * a client revokes its grants and tokens.
 */
export class InMemoryClients implements ClientStore {
  constructor(private readonly tables: InMemoryTables = new InMemoryTables()) {}

  async find(clientId: string): Promise<OidcClient | undefined> {
    const client = this.tables.clients.get(clientId);
    return client && copied(client);
  }

  async list(): Promise<OidcClient[]> {
    return [...this.tables.clients.values()].sort((a, b) => (a.clientId < b.clientId ? -1 : 1)).map(copied);
  }

  async save(client: OidcClient, _now: number): Promise<void> {
    const createdAt = this.tables.clients.get(client.clientId)?.createdAt ?? client.createdAt;
    this.tables.clients.set(client.clientId, { ...copied(client), createdAt });
  }

  async delete(clientId: string, now: number): Promise<boolean> {
    if (!this.tables.clients.delete(clientId)) return false;
    for (const grant of this.tables.grants.values()) {
      if (grant.clientId === clientId && grant.revokedAt === null) grant.revokedAt = now;
    }
    for (const token of this.tables.tokens.values()) {
      if (token.clientId === clientId && token.revokedAt === null) token.revokedAt = now;
    }
    return true;
  }
}

import { InMemoryClients } from "./clients.ts";
import { InMemoryOidcRecords } from "./oidc-records.ts";
import { InMemoryOneTimeRecords } from "./one-time-records.ts";
import { InMemorySigningKeys } from "./signing-keys.ts";
import { InMemoryTables } from "./tables.ts";
import { InMemoryTokens } from "./tokens.ts";

export { ManualClock } from "./clock.ts";
export { InMemoryClients, InMemoryOidcRecords, InMemoryOneTimeRecords, InMemorySigningKeys, InMemoryTables, InMemoryTokens };

/**
 * Every OIDC port over one set of tables, as src/app/compose-oidc.ts puts the
 * repositories over one database. For unit tests of domain services: a rule
 * is tested in milliseconds, without a server or a database.
 * test/unit/in-memory-stores-contract.test.ts holds these to the repositories' behaviour.
 */
export function inMemoryOidcStores(tables = new InMemoryTables()) {
  return {
    tables,
    oidc: new InMemoryOidcRecords(tables),
    tokens: new InMemoryTokens(tables),
    oneTime: new InMemoryOneTimeRecords(tables),
    signingKeys: new InMemorySigningKeys(tables),
    clients: new InMemoryClients(tables),
  };
}

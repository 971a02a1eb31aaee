import type { Config } from "../../config/schema.ts";
import { ClientsRepository } from "../../storage/clients-repository.ts";
import type { Database } from "../../storage/database.ts";
import { OidcRepository } from "../../storage/oidc-repository.ts";
import { OneTimeRecords } from "../../storage/one-time-records.ts";
import type { Clock } from "../clock.ts";
import { LoginThrottle } from "../credentials/login-throttle.ts";
import { defaultAcrPolicy, type AcrPolicy } from "./acr.ts";
import { ClientAuthenticator } from "./client-authentication.ts";
import type { OidcClient } from "./client.ts";
import { AuthorizationFlow } from "./flow/authorization-flow.ts";
import { PushedRequests } from "./pushed-requests.ts";
import { OidcUsers } from "./users.ts";

/** The OpenID Connect provider's services. */
export interface Oidc {
  issuer: string;
  policy: AcrPolicy;
  clients: ClientsRepository & { findClient(clientId: string): Promise<OidcClient | undefined> };
  clientAuthenticator: ClientAuthenticator;
  pushed: PushedRequests;
  users: OidcUsers;
  flow: AuthorizationFlow;
  throttle: LoginThrottle;
  /** Server key: CSRF tokens, sealing TOTP secrets. */
  secretKey: Buffer;
  sessionLifetimeSeconds: number;
  endpoints: { authorization: string; par: string };
}

export function createOidc(config: Config, database: Database, secretKey: Buffer, clock: Clock): Oidc {
  const issuer = config.baseUrl;
  const records = new OneTimeRecords(database);
  const repository = new OidcRepository(database);
  const clients = Object.assign(new ClientsRepository(database), {
    findClient(this: ClientsRepository, clientId: string) {
      return this.find(clientId);
    },
  });
  const users = new OidcUsers(repository, secretKey, clock);
  return {
    issuer,
    policy: defaultAcrPolicy,
    clients,
    clientAuthenticator: new ClientAuthenticator(clients, records, clock),
    pushed: new PushedRequests(records, clock, config.parLifetimeSeconds),
    users,
    flow: new AuthorizationFlow(repository, users, clients, records, {
      issuer,
      policy: defaultAcrPolicy,
      interactionLifetimeMs: 30 * 60 * 1000,
      sessionLifetimeMs: config.sessionLifetimeSeconds * 1000,
      codeLifetimeMs: 60 * 1000,
    }, clock),
    throttle: new LoginThrottle(clock),
    secretKey,
    sessionLifetimeSeconds: config.sessionLifetimeSeconds,
    endpoints: { authorization: `${issuer}/api/oidc/v1/authorize`, par: `${issuer}/api/oidc/v1/par` },
  };
}

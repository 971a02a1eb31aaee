import { readFile } from "node:fs/promises";
import type { Config } from "../config/schema.ts";
import { scopeList } from "../domain/accounts/api-scopes.ts";
import type { ApiClientAuthMethod } from "../domain/accounts/oauth-clients.ts";
import { DomainError } from "../domain/errors.ts";
import { withDomain } from "./admin.ts";
import { UsageError } from "./usage-error.ts";

const methods: readonly string[] = ["client_secret_basic", "client_secret_post", "private_key_jwt"];

/**
 * `shomei account oauth-client add|list|remove <account> …`: the OAuth
 * clients an API account's back ends use for client_credentials access to
 * the certificate API (the CLI side of OAuthClientService).
 */
export async function oauthClientCommand(config: Config, args: string[], values: Record<string, unknown>): Promise<void> {
  const [action, accountName, clientId] = args;
  if (!accountName) throw new UsageError(`account oauth-client ${action ?? "<action>"} needs an account name`);
  const jwks = typeof values.jwks === "string" ? await readJwks(values.jwks) : undefined;
  await withDomain(config, async ({ accounts, oauthClients }) => {
    const account = await accounts.get(accountName);
    switch (action) {
      case "add": {
        const method = typeof values.method === "string" ? values.method : jwks !== undefined ? "private_key_jwt" : "client_secret_basic";
        if (!methods.includes(method)) throw new UsageError(`--method must be ${methods.join(", ")}`);
        const { client, secret } = await oauthClients.add(account.id, {
          ...(typeof values.name === "string" ? { name: values.name } : {}),
          authMethod: method as ApiClientAuthMethod,
          ...(jwks !== undefined ? { jwks } : {}),
          ...(typeof values.scope === "string" ? { scopes: scopeList(values.scope) } : {}),
          dpopBoundAccessTokens: values.dpop === true,
        });
        console.error(`added OAuth client for account ${account.name} (${client.tokenEndpointAuthMethod}, scope "${client.allowedScopes.join(" ")}"${client.dpopBoundAccessTokens ? ", DPoP required" : ""})`);
        console.log(`client_id ${client.clientId}`);
        if (secret !== undefined) {
          console.error("its client_secret is shown once, store it now:");
          console.log(`client_secret ${secret}`);
        }
        return;
      }
      case "list": {
        for (const c of await oauthClients.list(account.id)) {
          console.log(`${c.clientId}\t${c.name}\t${c.tokenEndpointAuthMethod}\t${c.allowedScopes.join(" ")}\t${c.dpopBoundAccessTokens ? "DPoP" : "-"}\t${new Date(c.createdAt).toISOString()}`);
        }
        return;
      }
      case "remove": {
        if (!clientId) throw new UsageError("account oauth-client remove needs an account name and a client_id");
        await oauthClients.remove(account.id, clientId);
        console.log(`removed OAuth client ${clientId} of account ${account.name}; its access tokens no longer work`);
        return;
      }
      default:
        throw new UsageError(`unknown action "${action ?? ""}": use oauth-client add, list or remove`);
    }
  });
}

async function readJwks(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new DomainError("invalid_field", `${file} is not JSON (a JWK Set: {"keys": [ … ]})`, "jwks");
  }
}

import { readFile } from "node:fs/promises";
import type { ClientStore } from "../../domain/oidc/stores.ts";
import { DomainError } from "../../domain/errors.ts";
import { registrationFromMetadata } from "../../domain/oidc/client-registration.ts";
import { checkServerCalledUris } from "../../domain/oidc/server-called-uris.ts";

/**
 * The declarative client registry: a JSON file `{ "clients": [ <RFC 7591 client
 * metadata>, … ] }` applied at start-up. Each entry is created or updated;
 * clients registered otherwise (CLI) are left alone. Secrets in the file are
 * hashed before storage; prefer `client_secret_sha256` so the file holds none.
 * allowPrivate: whether a backchannel_logout_uri or jwks_uri may be http:// or a
 * loopback or private address (SHOMEI_WEBHOOK_ALLOW_PRIVATE).
 */
export async function applyClientsFile(file: string, clients: Pick<ClientStore, "save">, now: number, allowPrivate = true): Promise<string[]> {
  let document: unknown;
  try {
    document = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new DomainError("invalid_field", `cannot read clients file ${file}: ${(error as Error).message}`, "clientsFile");
  }
  const entries = (document as { clients?: unknown })?.clients;
  if (!Array.isArray(entries)) throw new DomainError("invalid_field", `clients file ${file} must hold {"clients": [ … ]}`, "clientsFile");
  const ids: string[] = [];
  for (const [i, entry] of entries.entries()) {
    let registration;
    try {
      registration = registrationFromMetadata(entry, now);
      checkServerCalledUris(registration.client, allowPrivate);
    } catch (error) {
      if (error instanceof DomainError) throw new DomainError("invalid_field", `clients file ${file}, clients[${i}]: ${error.message}`, "clientsFile");
      throw error;
    }
    if (registration.generatedSecret) {
      throw new DomainError("invalid_field", `clients file ${file}, clients[${i}]: give client_secret or client_secret_sha256`, "clientsFile");
    }
    await clients.save(registration.client, now);
    ids.push(registration.client.clientId);
  }
  return ids;
}

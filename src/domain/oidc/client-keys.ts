import { decodeProtectedHeader, type JSONWebKeySet } from "jose";
import * as z from "zod";
import type { Clock } from "../clock.ts";
import type { OidcClient } from "./client.ts";
import { brokenBy } from "./fapi2-profile.ts";
import { hasPrivateMembers } from "./public-jwk.ts";

/**
 * The port through which a client's `jwks_uri` is read: one GET under the
 * server's network policy for URLs others registered (no redirects, a
 * deadline, a size limit, checked addresses), answering the parsed JSON or
 * why there is none, in words that may be sent to the client.
 */
export interface KeySetSource {
  read(uri: string): Promise<{ document: unknown } | { error: string }>;
}

export interface ClientKeysSettings {
  /** How long a fetched key set is used before it is fetched again. */
  cacheTtlMs: number;
  /** The shortest time between two fetches of one URI (an unknown kid, a failure): bounds what requests can make the server send. */
  refetchCooldownMs: number;
}

/** Why a client's keys cannot be had; the message is safe to send to the client. */
export class ClientKeysUnavailable extends Error {
  override name = "ClientKeysUnavailable";
}

/** The most key sets kept; beyond this the oldest goes first (dynamic registration could otherwise grow it without bound). */
const maxEntries = 1000;

/** The most keys a fetched set may hold, as a registered `jwks` is bounded by the request body. */
const maxKeys = 100;

const keySetDocument = z.object({
  keys: z
    .array(z.record(z.string(), z.unknown()))
    .min(1)
    .max(maxKeys)
    .refine((keys) => keys.every((k) => !hasPrivateMembers(k))),
});

type Entry = { fetchedAt: number; keys: JSONWebKeySet } | { fetchedAt: number; error: string };

/**
 * The public keys a client's JWTs (client assertions, request objects) are
 * verified with: its registered `jwks`, or the set at its `jwks_uri`, fetched
 * through the KeySetSource port and kept per URI for cacheTtlMs. A JWT whose
 * `kid` is not in the kept set makes one fetch before the TTL ends (the
 * client rotated its keys), unless the URI was fetched within
 * refetchCooldownMs; a failed fetch is kept for that long too, so a stream of
 * requests makes at most one fetch per cool-down. Concurrent fetches of one
 * URI share one request. The fapi2 profile's key-size rule is checked here,
 * at each use, since a fetched set can change.
 */
export class ClientKeys {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<Entry>>();

  constructor(
    private readonly source: KeySetSource,
    private readonly clock: Clock,
    private readonly settings: ClientKeysSettings,
  ) {}

  /** The keys to verify `jwt` with (its header's kid chooses whether a kept set is still good). Throws ClientKeysUnavailable. */
  async keysFor(client: Pick<OidcClient, "jwks" | "jwksUri" | "profile">, jwt: string): Promise<JSONWebKeySet> {
    const keys = client.jwks ?? (client.jwksUri !== undefined ? await this.fetched(client.jwksUri, headerKid(jwt)) : undefined);
    if (!keys || !Array.isArray(keys.keys) || keys.keys.length === 0) throw new ClientKeysUnavailable("the client has no registered keys (jwks or jwks_uri)");
    const broken = brokenBy(client, "client_keys", { keys: keys.keys as unknown as Record<string, unknown>[] });
    if (broken) throw new ClientKeysUnavailable(`${client.jwks ? "jwks" : "the key set at jwks_uri"}: ${broken.requirement}`);
    return keys;
  }

  private async fetched(uri: string, kid: string | undefined): Promise<JSONWebKeySet> {
    const now = this.clock();
    let entry = this.entries.get(uri);
    if (!entry || !this.usable(entry, kid, now)) entry = await this.refresh(uri);
    if ("error" in entry) throw new ClientKeysUnavailable(`the client's jwks_uri could not be used: ${entry.error}`);
    return entry.keys;
  }

  /** Whether a kept entry answers this use without a fetch. */
  private usable(entry: Entry, kid: string | undefined, now: number): boolean {
    const age = now - entry.fetchedAt;
    if (age < 0 || age >= ("error" in entry ? this.settings.refetchCooldownMs : this.settings.cacheTtlMs)) return false;
    if ("error" in entry || kid === undefined || entry.keys.keys.some((k) => k.kid === kid)) return true;
    // An unknown kid: fetched again, unless the set is too fresh to be fetched again: then verification fails with it.
    return age < this.settings.refetchCooldownMs;
  }

  private refresh(uri: string): Promise<Entry> {
    const pending = this.inFlight.get(uri);
    if (pending) return pending;
    const fetching = this.load(uri).finally(() => this.inFlight.delete(uri));
    this.inFlight.set(uri, fetching);
    return fetching;
  }

  private async load(uri: string): Promise<Entry> {
    const answer = await this.source.read(uri);
    const fetchedAt = this.clock();
    let entry: Entry;
    if ("error" in answer) {
      entry = { fetchedAt, error: answer.error };
    } else {
      const parsed = keySetDocument.safeParse(answer.document);
      entry = parsed.success
        ? { fetchedAt, keys: parsed.data as unknown as JSONWebKeySet }
        : { fetchedAt, error: `${uri}: not a JWK Set of 1 to ${maxKeys} public keys ({"keys": [ … ]})` };
    }
    this.entries.delete(uri);
    this.entries.set(uri, entry);
    if (this.entries.size > maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return entry;
  }
}

/** The kid a JWT's header names, if any; a malformed header is the verifier's to refuse. */
function headerKid(jwt: string): string | undefined {
  try {
    const { kid } = decodeProtectedHeader(jwt);
    return typeof kid === "string" ? kid : undefined;
  } catch {
    return undefined;
  }
}

import { readFile } from "node:fs/promises";
import type { Config } from "../config/schema.ts";
import { totpUri } from "../domain/credentials/totp.ts";
import { DomainError } from "../domain/errors.ts";
import { registrationFromMetadata } from "../domain/oidc/client-registration.ts";
import { checkServerCalledUris } from "../domain/oidc/server-called-uris.ts";
import { isSigningAlg, signingAlgs, type SigningAlg } from "../domain/oidc/keys/signing-algorithms.ts";
import type { LocalizedName } from "../domain/oidc/model.ts";
import type { InitialAccessTokens } from "../domain/oidc/registration/initial-access-tokens.ts";
import { withDomain } from "./admin.ts";
import { UsageError } from "./usage-error.ts";

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** shomei client add|list|remove: the client registry (RFC 7591 metadata as JSON). */
export async function clientCommand(config: Config, args: string[], values: Record<string, unknown>): Promise<void> {
  const [action, target] = args;
  await withDomain(config, async ({ oidc }) => {
    switch (action) {
      case "add": {
        const source = typeof values.file === "string" ? await readFile(values.file, "utf8") : typeof values.metadata === "string" ? values.metadata : undefined;
        if (!source) throw new UsageError("client add needs --file FILE or --metadata JSON");
        let metadata: unknown;
        try {
          metadata = JSON.parse(source);
        } catch (error) {
          throw new DomainError("invalid_field", `client metadata is not valid JSON: ${(error as Error).message}`, "metadata");
        }
        const now = Date.now();
        const { client, generatedSecret } = registrationFromMetadata(metadata, now);
        checkServerCalledUris(client, config.webhookAllowPrivate);
        await oidc.clients.save(client, now);
        const profile = client.profile ? `, profile ${client.profile}` : "";
        console.error(`saved client ${client.clientId} (${client.tokenEndpointAuthMethod}, ID tokens ${client.idTokenSignedResponseAlg}${profile})`);
        if (generatedSecret) {
          console.error("its client_secret is shown once, store it now:");
          console.log(generatedSecret);
        }
        return;
      }
      case "list": {
        for (const c of await oidc.clients.list()) {
          const par = c.requirePushedAuthorizationRequests ? "PAR required" : "PAR optional";
          const logout = c.backchannelLogoutUri ? `\tback-channel logout ${c.backchannelLogoutUri}${c.backchannelLogoutSessionRequired ? " (sid required)" : ""}` : "";
          console.log(`${c.clientId}\t${c.tokenEndpointAuthMethod}\t${par}\t${c.idTokenSignedResponseAlg}\t${c.redirectUris.join(" ")}${logout}`);
        }
        return;
      }
      case "remove": {
        if (!target) throw new UsageError("client remove needs a client_id");
        if (!(await oidc.clients.delete(target, Date.now()))) throw new DomainError("invalid_field", `no client ${target}`, "client_id");
        console.log(`removed client ${target}`);
        return;
      }
      case "registration-token":
        return registrationTokenCommand(oidc.registrationTokens, args.slice(1), values);
      default:
        throw new UsageError(`unknown action "${action ?? ""}": use add, list, remove or registration-token`);
    }
  });
}

/** shomei client registration-token create|list|revoke: initial access tokens for dynamic registration (RFC 7591). */
async function registrationTokenCommand(tokens: InitialAccessTokens, args: string[], values: Record<string, unknown>): Promise<void> {
  const [action, id] = args;
  switch (action) {
    case "create": {
      const name = typeof values.name === "string" && values.name ? values.name : "registration token";
      const { token, summary } = await tokens.create(name);
      console.error(`created initial access token ${summary.id} (${summary.name}); it is shown once, store it now:`);
      console.log(token);
      return;
    }
    case "list": {
      for (const t of await tokens.list()) console.log(`${t.id}\t${t.name}\t${new Date(t.createdAt).toISOString()}`);
      return;
    }
    case "revoke": {
      if (!id) throw new UsageError("client registration-token revoke needs a token id (see registration-token list)");
      if (!(await tokens.revoke(id))) throw new DomainError("invalid_field", `no initial access token ${id}`, "id");
      console.log(`revoked initial access token ${id}`);
      return;
    }
    default:
      throw new UsageError(`unknown action "${action ?? ""}": use registration-token create, list or revoke`);
  }
}

/** shomei user create|set-password|enrol-totp|sign-out: end users of the OpenID Connect provider. */
export async function userCommand(config: Config, args: string[], values: Record<string, unknown>): Promise<void> {
  if (args[0] === "passkeys") return passkeysCommand(config, args.slice(1));
  const [action, login] = args;
  if (!login) throw new UsageError(`user ${action ?? "<action>"} needs a login`);
  await withDomain(config, async ({ oidc }) => {
    switch (action) {
      case "create": {
        // The password comes on standard input, never as an argument (arguments are visible in the process list).
        const password = (await readStdin()).replace(/\r?\n$/, "");
        const user = await oidc.users.create({
          login,
          password,
          ...(typeof values.name === "string" ? { name: values.name } : {}),
          ...(typeof values.names === "string" ? { localizedNames: parseNames(values.names) } : {}),
          ...(typeof values.email === "string" ? { email: values.email } : {}),
        });
        console.log(`created user ${user.login} (${user.id})`);
        return;
      }
      case "set-password": {
        const user = await oidc.users.findByLogin(login);
        if (!user) throw new DomainError("invalid_field", `no user ${login}`, "login");
        // On standard input, as for create.
        await oidc.users.setPassword(user.id, (await readStdin()).replace(/\r?\n$/, ""));
        // Whoever held the old password is signed out everywhere; the applications are told (Back-Channel Logout).
        const ended = await oidc.sessionEndings.endUserSessions(user.id);
        console.log(`password of ${user.login} replaced, ${sessionsText(ended)} ended; failed sign-ins already counted still pause it until they lift`);
        return;
      }
      case "sign-out": {
        const user = await oidc.users.findByLogin(login);
        if (!user) throw new DomainError("invalid_field", `no user ${login}`, "login");
        const ended = await oidc.sessionEndings.endUserSessions(user.id);
        console.log(`${sessionsText(ended)} of ${user.login} ended; the applications they signed in to are told by the running server`);
        return;
      }
      case "enrol-totp": {
        const user = await oidc.users.findByLogin(login);
        if (!user) throw new DomainError("invalid_field", `no user ${login}`, "login");
        const secret = await oidc.users.enrolTotp(user.id);
        console.error(`TOTP enrolled for ${login}; add it to an authenticator app (shown once):`);
        console.log(totpUri(secret, { issuer: "shomei", account: login }));
        return;
      }
      default:
        throw new UsageError(`unknown action "${action ?? ""}": use create, set-password, enrol-totp, sign-out or passkeys`);
    }
  });
}

/**
 * shomei user passkeys list <login> | remove <login> <credential-id>: an
 * operator's view of a user's passkeys, and removing one (a lost device). A
 * removed passkey stops signing in at once; its authenticator still holds it.
 */
async function passkeysCommand(config: Config, args: string[]): Promise<void> {
  const [action, login, credentialId] = args;
  if (action !== "list" && action !== "remove") throw new UsageError(`unknown action "user passkeys ${action ?? ""}": use list or remove`);
  if (!login) throw new UsageError(`user passkeys ${action} needs a login`);
  if (action === "remove" && !credentialId) throw new UsageError("user passkeys remove needs a login and a credential id (from user passkeys list)");
  await withDomain(config, async ({ oidc }) => {
    const user = await oidc.users.findByLogin(login);
    if (!user) throw new DomainError("invalid_field", `no user ${login}`, "login");
    if (action === "list") {
      for (const p of await oidc.passkeys.list(user.id)) {
        const lastUsed = p.lastUsedAt === null ? "never used" : `last used ${new Date(p.lastUsedAt).toISOString()}`;
        console.log(`${p.credentialId}\t${p.name}\t${p.backupEligible ? "synced" : "device-bound"}\tcounter ${p.signCount}\tadded ${new Date(p.createdAt).toISOString()}\t${lastUsed}`);
      }
      return;
    }
    if (!(await oidc.passkeys.remove(user.id, credentialId!))) throw new DomainError("invalid_field", `${login} has no passkey ${credentialId}`, "credential_id");
    console.log(`removed passkey ${credentialId} of ${login}`);
  });
}

/**
 * shomei keys rotate|list: the ID token signing keys (rotation keeps the
 * previous key published for its grace period). rotate renews every
 * algorithm's key, or only the one --alg names.
 */
export async function keysCommand(config: Config, args: string[], values: Record<string, unknown> = {}): Promise<void> {
  const [action] = args;
  const algs = rotationAlgs(values.alg);
  if (values.alg !== undefined && action !== "rotate") throw new UsageError("--alg is only used with rotate");
  await withDomain(config, async ({ oidc }) => {
    switch (action) {
      case "rotate": {
        for (const alg of algs) {
          const { newKid, retiredKid } = await oidc.signingKeys.rotate(alg);
          console.log(`${alg} signing with ${newKid}`);
          if (retiredKid) console.error(`retired ${retiredKid}: it stays in the JWKS for the grace period, so tokens it signed still verify`);
        }
        return;
      }
      case "list": {
        for (const key of await oidc.signingKeys.published()) {
          const state = key.retiredAt === null ? "active" : `retired ${new Date(key.retiredAt).toISOString()}`;
          console.log(`${key.kid}\t${key.alg}\tgeneration ${key.generation}\t${state}`);
        }
        return;
      }
      default:
        throw new UsageError(`unknown action "${action ?? ""}": use rotate or list`);
    }
  });
}

function rotationAlgs(value: unknown): SigningAlg[] {
  if (value === undefined) return [...signingAlgs];
  if (!isSigningAlg(value)) throw new UsageError(`unknown algorithm ${JSON.stringify(value)}: use one of ${signingAlgs.join(", ")}`);
  return [value];
}

function sessionsText(n: number): string {
  return n === 1 ? "1 session" : `${n} sessions`;
}

/** --names: a JSON array of {tag, value}; the domain checks the tags and values. */
function parseNames(text: string): LocalizedName[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError("--names must be JSON, e.g. [{\"tag\":\"ja\",\"value\":\"山田 花子\"}]");
  }
  const shaped = Array.isArray(parsed) && parsed.every((n) => typeof n === "object" && n !== null && typeof n.tag === "string" && typeof n.value === "string");
  if (!shaped) throw new UsageError("--names must be an array of {\"tag\": language tag, \"value\": name}");
  return (parsed as LocalizedName[]).map(({ tag, value }) => ({ tag, value }));
}

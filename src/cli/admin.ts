import type { Config } from "../config/schema.ts";
import { createDomain, loadSecretKey, type Domain } from "../app/compose.ts";
import { extensionsOf } from "../app/mode-extensions.ts";
import { openDatabase } from "../storage/database.ts";
import { migrateToLatest } from "../storage/migrate.ts";
import { UsageError } from "./usage-error.ts";
import { readFile } from "node:fs/promises";
import { certificateDer } from "../domain/oidc/jpki/signed-challenge.ts";

/** Opens the configured database (migrating it like `serve` would), runs `work`, and closes it. */
export async function withDomain<T>(config: Config, work: (domain: Domain) => Promise<T>): Promise<T> {
  const database = await openDatabase(config.databaseUrl);
  try {
    if (config.migrateOnStart) await migrateToLatest(database);
    return await work(createDomain(config, database, await loadSecretKey(config), undefined, undefined, { extensions: await extensionsOf(config) }));
  } finally {
    await database.close();
  }
}

function date(ms: number | null): string {
  return ms === null ? "-" : new Date(ms).toISOString();
}

export async function accountCommand(config: Config, args: string[], values: Record<string, unknown>): Promise<void> {
  const [action, name] = args;
  await withDomain(config, async ({ accounts }) => {
    switch (action) {
      case "create": {
        if (!name) throw new UsageError("account create needs a name");
        const account = await accounts.create(name, values.start ? "active" : "not_started");
        console.log(`created account ${account.name} (${account.id}), API use ${account.apiStatus}`);
        return;
      }
      case "start":
      case "suspend": {
        if (!name) throw new UsageError(`account ${action} needs a name`);
        const account = await accounts.setApiStatus(name, action === "start" ? "active" : "suspended");
        console.log(`account ${account.name}: API use ${account.apiStatus}`);
        return;
      }
      case "list": {
        for (const a of await accounts.list()) console.log(`${a.name}\t${a.id}\t${a.apiStatus}\t${date(a.createdAt)}`);
        return;
      }
      default:
        throw new UsageError(`unknown action "${action ?? ""}": use create, start, suspend or list`);
    }
  });
}

export async function tokenCommand(config: Config, args: string[], values: Record<string, unknown>): Promise<void> {
  const [action, target] = args;
  await withDomain(config, async ({ accounts }) => {
    switch (action) {
      case "create": {
        if (!target) throw new UsageError("token create needs an account name");
        const name = typeof values.name === "string" && values.name ? values.name : "api token";
        const { token, summary } = await accounts.createToken(target, name);
        console.error(`created token ${summary.prefix} for account ${target}; it is shown once, store it now:`);
        console.log(token);
        return;
      }
      case "revoke": {
        if (!target) throw new UsageError("token revoke needs a token prefix (shm_…)");
        await accounts.revokeToken(target);
        console.log(`revoked token ${target}`);
        return;
      }
      case "list": {
        if (!target) throw new UsageError("token list needs an account name");
        for (const t of await accounts.listTokens(target)) {
          console.log(`${t.prefix}\t${t.name}\tcreated ${date(t.createdAt)}\tlast used ${date(t.lastUsedAt)}\t${t.revokedAt ? `revoked ${date(t.revokedAt)}` : "active"}`);
        }
        return;
      }
      default:
        throw new UsageError(`unknown action "${action ?? ""}": use create, revoke or list`);
    }
  });
}

/**
 * `shomei certificate link <account> <certificate-id> <user-id>`: an
 * operator's explicit link, for a renewed or re-issued certificate no link
 * source connected to its person. The certificate belongs to the user from now on.
 *
 * `shomei certificate link-login <login> <certificate-file>`: links a JPKI
 * certificate (PEM or DER) to an end user of the OpenID Connect provider,
 * for JPKI sign-in, once it is trusted, current and good by a status check.
 */
export async function certificateCommand(config: Config, args: string[]): Promise<void> {
  if (args[0] === "link-login") return linkLogin(config, args[1], args[2]);
  const [action, accountName, certificateId, userId] = args;
  if (action !== "link") throw new UsageError(`unknown action "${action ?? ""}": use link or link-login`);
  if (!accountName || !certificateId || !userId) throw new UsageError("certificate link needs an account name, a certificate id and a user id");
  await withDomain(config, async ({ accounts, registry }) => {
    const account = await accounts.get(accountName);
    const { certificate, user } = await registry.link(account.id, certificateId, userId);
    console.log(`certificate ${certificate.id} of account ${account.name} now belongs to user ${user.id}`);
  });
}

async function linkLogin(config: Config, login: string | undefined, file: string | undefined): Promise<void> {
  if (!login || !file) throw new UsageError("certificate link-login needs a login and a certificate file (PEM or DER)");
  const content = await readFile(file).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read ${file} (${error.code ?? error.message})`);
  });
  const text = content.toString("latin1");
  const der = text.includes("-----BEGIN CERTIFICATE-----") ? certificateDer(text) : content;
  await withDomain(config, async ({ oidc }) => {
    const user = await oidc.users.findByLogin(login);
    if (!user) throw new UsageError(`no end user with login ${login}`);
    const link = await oidc.jpki.linkByOperator(user.id, der);
    console.log(`certificate ${link.certificateId} (${link.type}) is linked to ${user.login}`);
  });
}

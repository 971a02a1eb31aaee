import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config/load.ts";
import type { SettingName } from "../config/schema.ts";
import { DomainError } from "../domain/errors.ts";
import { DatabaseUnavailableError } from "../storage/database.ts";
import { version } from "../version.ts";
import { accountCommand, certificateCommand, tokenCommand } from "./admin.ts";
import { crlCommand } from "./crl.ts";
import { cardCommand, SignRequestRefused } from "./card-sign.ts";
import { eventsCommand } from "./events.ts";
import { migrateCommand } from "./migrate.ts";
import { clientCommand, keysCommand, userCommand } from "./oidc-admin.ts";
import { oauthClientCommand } from "./oauth-client-admin.ts";
import { serveCommand } from "./serve.ts";
import { UsageError } from "./usage-error.ts";
import { JpkiError } from "../domain/oidc/jpki/jpki-error.ts";

interface Command {
  summary: string;
  usage: string;
  options: Record<string, { type: "string" | "boolean"; description: string }>;
  /** Takes positional arguments (sub-actions and names). */
  positionals?: boolean;
  run(config: ReturnType<typeof loadConfig>, positionals: string[], values: Record<string, unknown>): Promise<void>;
}

const commonOptions = {
  config: { type: "string", description: "JSON config file (also SHOMEI_CONFIG)" },
  help: { type: "boolean", description: "show this help" },
} as const;

const commands: Record<string, Command> = {
  serve: {
    summary: "run the service (OIDC routes and RPCs on one port)",
    usage: "shomei serve [--mode mock|production] [--port N] [--config FILE]",
    options: {
      ...commonOptions,
      mode: { type: "string", description: "mock (demo data, mock CA) or production (also SHOMEI_MODE)" },
      port: { type: "string", description: "port to listen on (also PORT, default 8080)" },
    },
    run: serveCommand,
  },
  migrate: {
    summary: "apply pending database migrations and exit",
    usage: "shomei migrate [--config FILE]",
    options: { ...commonOptions },
    run: migrateCommand,
  },
  account: {
    summary: "manage API accounts: create, start, suspend, list; their OAuth clients",
    usage:
      "shomei account create <name> [--start] | start <name> | suspend <name> | list\n" +
      "       shomei account oauth-client add <account> [--method M] [--jwks FILE] [--scope S] [--dpop] [--name NAME] | list <account> | remove <account> <client_id>",
    options: {
      ...commonOptions,
      start: { type: "boolean", description: "with create: start API use at once" },
      method: { type: "string", description: "oauth-client add: client_secret_basic (default), client_secret_post or private_key_jwt" },
      jwks: { type: "string", description: "oauth-client add: a file with the client's public keys (JWK Set), for private_key_jwt" },
      scope: { type: "string", description: 'oauth-client add: the scopes it may ask for, e.g. "certificate.status verify" (default: all)' },
      dpop: { type: "boolean", description: "oauth-client add: every token request must carry a DPoP proof" },
      name: { type: "string", description: "oauth-client add: a label for the client" },
    },
    positionals: true,
    run: (config, positionals, values) =>
      positionals[0] === "oauth-client" ? oauthClientCommand(config, positionals.slice(1), values) : accountCommand(config, positionals, values),
  },
  token: {
    summary: "manage API tokens: create, revoke, list",
    usage: "shomei token create <account> [--name NAME] | revoke <prefix> | list <account>",
    options: { ...commonOptions, name: { type: "string", description: "with create: a label for the token" } },
    positionals: true,
    run: (config, positionals, values) => tokenCommand(config, positionals, values),
  },
  certificate: {
    summary: "link a certificate to a user of its account, or to an end user of the provider (JPKI sign-in)",
    usage: "shomei certificate link <account> <certificate-id> <user-id> | link-login <login> <certificate-file>",
    options: { ...commonOptions },
    positionals: true,
    run: (config, positionals) => certificateCommand(config, positionals),
  },
  card: {
    summary: "play a JPKI app: answer a signing request with a card's key and certificate",
    usage: "shomei card sign <request URL> --key FILE --certificate FILE [--code CODE] [--stop pin_locked|cancelled | --pin-attempts-left N]",
    options: {
      ...commonOptions,
      key: { type: "string", description: "the card's private key (PEM)" },
      certificate: { type: "string", description: "the card's certificate (PEM)" },
      code: { type: "string", description: "the binding code the page shows (asked for when not given)" },
      stop: { type: "string", description: "report pin_locked or cancelled instead of signing" },
      "pin-attempts-left": { type: "string", description: "report the PIN attempts left after a wrong PIN (the request stays open)" },
    },
    positionals: true,
    run: (_config, positionals, values) => cardCommand(positionals, values),
  },
  crl: {
    summary: "show the CRLs the instances on this database hold, and their state",
    usage: "shomei crl list",
    options: { ...commonOptions },
    positionals: true,
    run: (config, positionals) => crlCommand(config, positionals),
  },
  events: {
    summary: "an account's certificate events: list them, send one to its webhooks again",
    usage: "shomei events list <account> [--certificate ID] [--type TYPE] [--limit N] | redeliver <account> <event-id> [--endpoint ID]",
    options: {
      ...commonOptions,
      certificate: { type: "string", description: "with list: only this certificate's events" },
      type: { type: "string", description: "with list: only events of this type (certificate.revoked…)" },
      limit: { type: "string", description: "with list: how many, newest first (1-100, default 20)" },
      endpoint: { type: "string", description: "with redeliver: only to this webhook endpoint (default: every enabled one that takes the type)" },
    },
    positionals: true,
    run: (config, positionals, values) => eventsCommand(config, positionals, values),
  },
  client: {
    summary: "manage OpenID Connect clients: add, list, remove; initial access tokens for registration",
    usage: "shomei client add (--file FILE | --metadata JSON) | list | remove <client_id> | registration-token create [--name NAME] | registration-token list | registration-token revoke <id>",
    options: {
      ...commonOptions,
      file: { type: "string", description: "with add: a JSON file of RFC 7591 client metadata" },
      metadata: { type: "string", description: "with add: the same metadata inline" },
      name: { type: "string", description: "with registration-token create: a label for the token" },
    },
    positionals: true,
    run: (config, positionals, values) => clientCommand(config, positionals, values),
  },
  keys: {
    summary: "ID token signing keys: rotate, list",
    usage: "shomei keys rotate [--alg ES256|RS256|PS256|EdDSA] | list",
    options: {
      ...commonOptions,
      alg: { type: "string", description: "with rotate: only this algorithm's key (default: every algorithm's)" },
    },
    positionals: true,
    run: (config, positionals, values) => keysCommand(config, positionals, values),
  },
  user: {
    summary: "manage end users: create and set-password (password on stdin; ends their sessions), enrol-totp, sign-out (ends every session), passkeys list|remove",
    usage: "shomei user create <login> [--name NAME] [--names JSON] [--email EMAIL] < password-file | set-password <login> < password-file | enrol-totp <login> | sign-out <login> | passkeys list <login> | passkeys remove <login> <credential-id>",
    options: {
      ...commonOptions,
      name: { type: "string", description: "with create: display name" },
      names: { type: "string", description: 'with create: the name in other languages, JSON: [{"tag":"ja","value":"…"},{"tag":"ja-Kana-JP","value":"…"}]' },
      email: { type: "string", description: "with create: email address" },
    },
    positionals: true,
    run: (config, positionals, values) => userCommand(config, positionals, values),
  },
};

function mainHelp(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  return [
    `shomei ${version}: OpenID Connect provider and certificate status service`,
    "",
    "Usage: shomei <command> [options]",
    "",
    "Commands:",
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    "",
    "Run 'shomei <command> --help' for a command's options. Settings come from the",
    "environment and an optional JSON file; see docs/reference/operations.md, section Configuration.",
  ].join("\n");
}

function commandHelp(name: string, command: Command): string {
  const width = Math.max(...Object.keys(command.options).map((o) => o.length)) + 2;
  return [
    `shomei ${name}: ${command.summary}`,
    "",
    `Usage: ${command.usage}`,
    "",
    "Options:",
    ...Object.entries(command.options).map(([o, d]) => `  --${o.padEnd(width)}  ${d.description}`),
  ].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(mainHelp());
    return 0;
  }
  if (name === "--version" || name === "-v") {
    console.log(version);
    return 0;
  }
  const command = commands[name];
  if (!command) {
    console.error(`shomei: unknown command "${name}"\n\n${mainHelp()}`);
    return 2;
  }
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: Boolean(command.positionals) }));
  } catch (error) {
    console.error(`shomei ${name}: ${(error as Error).message}\n\n${commandHelp(name, command)}`);
    return 2;
  }
  if (values.help) {
    console.log(commandHelp(name, command));
    return 0;
  }
  try {
    const overrides: Partial<Record<SettingName, unknown>> = { mode: values.mode, port: values.port };
    const config = loadConfig({ file: values.config as string | undefined, overrides });
    await command.run(config, positionals, values);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`shomei ${name}: ${error.message}\n\n${commandHelp(name, command)}`);
      return 2;
    }
    if (error instanceof SignRequestRefused) {
      console.error(`shomei ${name}: ${error.code}: ${error.message}`);
      return 1;
    }
    if (error instanceof JpkiError) {
      console.error(`shomei ${name}: ${error.code}: ${error.message}`);
      return 1;
    }
    if (error instanceof ConfigError || error instanceof DatabaseUnavailableError || error instanceof DomainError) {
      console.error(`shomei ${name}: ${error.message}`);
      return 1;
    }
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      console.error(`shomei ${name}: the port is already in use (${(error as Error).message})`);
      return 1;
    }
    console.error(`shomei ${name}: failed:`, error);
    return 1;
  }
}

// Not a top-level await: the build is a CommonJS bundle (scripts/build.mjs says why), which has none.
void main(process.argv.slice(2)).then((exitCode) => {
  // serve keeps the process alive until a signal; everything else ends here.
  if (exitCode !== 0 || process.argv[2] !== "serve") process.exitCode = exitCode;
});

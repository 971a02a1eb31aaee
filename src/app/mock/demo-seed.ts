import { readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import type { Accounts } from "../../domain/accounts/accounts.ts";
import type { CertificateType, Status } from "../../domain/certificates/model.ts";
import { DomainError } from "../../domain/errors.ts";
import type { InstalledExtension } from "../extension.ts";
import { mockOf } from "./installed-mock.ts";

export interface DemoData {
  accountName: string;
  token: string;
  userId: string;
  certificates: { id: string; type: CertificateType; status: Status }[];
}

/** What seeding needs: the accounts, and the installed extensions, the mock among them. */
export interface DemoServices {
  accounts: Accounts;
  extensions: readonly InstalledExtension[];
}

const accountName = "demo";
const plan: { type: CertificateType; status: Status }[] = [
  { type: "jpki_card_digital_signature", status: "good" },
  { type: "jpki_card_user_authentication", status: "good" },
  { type: "jpki_mobile_digital_signature", status: "revoked" },
];

/**
 * Mock mode only: an active "demo" account with a token, a user and three
 * certificates (one revoked for keyCompromise), so that `npm start` can print a
 * curl command that works. Idempotent. The token is kept in
 * <dataDir>/demo-api-token (mode 0600) so it stays the same across restarts;
 * it is demo data of the mock environment, never created in production mode.
 */
export async function seedDemo(domain: DemoServices, dataDir: string): Promise<DemoData> {
  const mock = mockOf(domain);
  const account = await domain.accounts.get(accountName).catch(async (error: unknown) => {
    if (error instanceof DomainError && error.code === "account_not_found") return domain.accounts.create(accountName, "active");
    throw error;
  });
  if (account.apiStatus !== "active") await domain.accounts.setApiStatus(accountName, "active");
  const token = await demoToken(domain, dataDir);

  let certificates = await mock.listCertificates(account.id);
  if (certificates.length === 0) {
    let userId: string | undefined;
    for (const item of plan) {
      const created = await mock.createCertificate(account.id, { type: item.type, userId, commonName: "Demo User" });
      userId = created.user.id;
      if (item.status === "revoked") {
        await mock.setStatus(account.id, created.certificate.id, { status: "revoked", revokedReason: 1 });
      }
    }
    certificates = await mock.listCertificates(account.id);
  }
  const statuses = await Promise.all(certificates.map((c) => mock.currentStatus(c.id)));
  return {
    accountName,
    token,
    userId: certificates[0]!.userId,
    certificates: certificates.map((c, i) => ({ id: c.id, type: c.type, status: statuses[i]! })),
  };
}

async function demoToken(domain: DemoServices, dataDir: string): Promise<string> {
  const file = path.join(dataDir, "demo-api-token");
  const saved = (await readFile(file, "utf8").catch(() => "")).trim();
  if (saved) {
    const valid = await domain.accounts.authenticate(saved).then(
      () => true,
      () => false,
    );
    if (valid) return saved;
  }
  const { token } = await domain.accounts.createToken(accountName, "demo token (mock mode)");
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, token + "\n", { mode: 0o600 });
  return token;
}

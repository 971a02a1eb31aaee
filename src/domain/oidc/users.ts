import { hashPassword, verifyPassword } from "../credentials/password-hash.ts";
import { open, seal } from "../credentials/secret-box.ts";
import { generateTotpSecret, totpCode, totpPeriodSeconds, totpStep, verifyTotp } from "../credentials/totp.ts";
import type { Clock } from "../clock.ts";
import { DomainError } from "../errors.ts";
import { newId } from "../ids.ts";
import type { LocalizedName, OidcUserRow } from "./model.ts";
import { isLanguageTag } from "./locales.ts";
import type { OidcUserStore } from "./stores.ts";
import type { AuthMethod } from "./acr.ts";

/**
 * A hash of a password nobody has, so that an unknown login costs as much time as a wrong password. Made at
 * the first unknown login rather than as the module loads: hashing is not work the start-up should wait for.
 */
let decoyHash: Promise<string> | undefined;

/** End users: password and TOTP verification, enrolment. */
export class OidcUsers {
  constructor(
    private readonly repository: OidcUserStore,
    /** Key that seals TOTP secrets at rest. */
    private readonly key: Buffer,
    private readonly clock: Clock,
  ) {}

  find(id: string): Promise<OidcUserRow | undefined> {
    return this.repository.findUser(id);
  }

  findByLogin(login: string): Promise<OidcUserRow | undefined> {
    return this.repository.findUserByLogin(login);
  }

  async create(input: { login: string; password: string; name?: string; localizedNames?: LocalizedName[]; email?: string }): Promise<OidcUserRow> {
    const localizedNames = checkLocalizedNames(input.localizedNames ?? []);
    if (!/^[A-Za-z0-9._@+-]{1,200}$/.test(input.login)) {
      throw new DomainError("invalid_field", "a login is 1–200 characters of letters, digits and . _ @ + -", "login");
    }
    if (input.password.length < 8) throw new DomainError("invalid_field", "a password has at least 8 characters", "password");
    if (await this.repository.findUserByLogin(input.login)) throw new DomainError("account_exists", `a user with login ${input.login} already exists`);
    const user: OidcUserRow = {
      id: newId(),
      login: input.login,
      passwordHash: await hashPassword(input.password),
      totpSecretSealed: null,
      totpLastStep: null,
      name: input.name ?? null,
      localizedNames,
      email: input.email ?? null,
      createdAt: this.clock(),
    };
    await this.repository.insertUser(user);
    return user;
  }

  /**
   * A new password (an operator's reset). Sign-in attempts are counted by the
   * login, not the password, so a pause in force stays until it lifts: a
   * reset is no way around it for someone who guessed.
   */
  async setPassword(userId: string, password: string): Promise<void> {
    if (password.length < 8) throw new DomainError("invalid_field", "a password has at least 8 characters", "password");
    await this.repository.updateUserSecrets(userId, { passwordHash: await hashPassword(password) });
  }

  /** Replaces the user's language-tagged names (an empty list removes them). */
  async setLocalizedNames(userId: string, names: LocalizedName[]): Promise<void> {
    await this.repository.updateUserNames(userId, checkLocalizedNames(names));
  }

  /** Enrols a new TOTP secret and returns it (shown once, to put in an authenticator app). */
  async enrolTotp(userId: string, secret = generateTotpSecret()): Promise<string> {
    await this.repository.updateUserSecrets(userId, { totpSecretSealed: seal(this.key, secret, userId) });
    return secret;
  }

  /** The user for a login and password, or undefined; takes as long for an unknown login as for a wrong password. */
  async verifyPassword(login: string, password: string): Promise<OidcUserRow | undefined> {
    const user = await this.repository.findUserByLogin(login);
    if (!user) {
      await verifyPassword(password, await (decoyHash ??= hashPassword("decoy password for unknown logins")));
      return undefined;
    }
    return (await verifyPassword(password, user.passwordHash)) ? user : undefined;
  }

  async checkPassword(user: OidcUserRow, password: string): Promise<boolean> {
    return verifyPassword(password, user.passwordHash);
  }

  /** Verifies a TOTP code and marks its time step used, so the same code cannot be used twice. */
  async verifyOtp(user: OidcUserRow, code: string): Promise<boolean> {
    if (!user.totpSecretSealed) return false;
    const step = verifyTotp(open(this.key, user.totpSecretSealed, user.id).toString("utf8"), code, this.clock(), { window: 1 });
    if (step === null) return false;
    return this.repository.advanceTotpStep(user.id, step);
  }

  /**
   * A code verifyOtp takes now, for the mock environment's hint on the
   * re-authentication page: the current step's, or, once that step is used
   * (a step-up a moment ago), the next step's, which the window accepts too.
   * Showing the used one sent a person round to "already used".
   */
  currentOtp(user: OidcUserRow): string | undefined {
    if (!user.totpSecretSealed) return undefined;
    const now = this.clock();
    const used = user.totpLastStep !== null && user.totpLastStep >= totpStep(now);
    return totpCode(open(this.key, user.totpSecretSealed, user.id).toString("utf8"), used ? now + totpPeriodSeconds * 1000 : now);
  }

  enrolledMethods(user: OidcUserRow): AuthMethod[] {
    return user.totpSecretSealed ? ["pwd", "otp"] : ["pwd"];
  }
}

/** At most one name per tag, each a well-formed BCP 47 tag and 1 to 200 characters of text. */
function checkLocalizedNames(names: LocalizedName[]): LocalizedName[] {
  const seen = new Set<string>();
  for (const { tag, value } of names) {
    if (!isLanguageTag(tag)) throw new DomainError("invalid_field", `${JSON.stringify(tag)} is not a language tag such as ja or ja-Kana-JP`, "localizedNames");
    if (seen.has(tag.toLowerCase())) throw new DomainError("invalid_field", `a name for ${tag} is given twice`, "localizedNames");
    if (value.trim() === "" || value.length > 200) throw new DomainError("invalid_field", `the ${tag} name is 1–200 characters`, "localizedNames");
    seen.add(tag.toLowerCase());
  }
  return names.map(({ tag, value }) => ({ tag, value }));
}

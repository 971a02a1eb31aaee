import { randomBytes } from "node:crypto";
import type * as WebAuthn from "@simplewebauthn/server";
import type { AuthenticatorTransport, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import type { Clock } from "../../clock.ts";
import type { AuthMethod } from "../acr.ts";
import type { OidcUserRow } from "../model.ts";
import { challengeOf, parseAuthenticationResponse, parseRegistrationResponse } from "./ceremony-response.ts";
import type { CeremonyBinding, PasskeyChallenges } from "./challenges.ts";
import type { PasskeyRow, PasskeyStore } from "./model.ts";
import { PasskeyError } from "./passkey-error.ts";
import type { RelyingParty } from "./relying-party.ts";

/**
 * The WebAuthn library, loaded at the first ceremony rather than at start-up:
 * it brings an X.509 stack and reflect-metadata with it, about a tenth of the
 * server's start on 2 cores, which only people using passkeys need.
 */
let library: Promise<typeof WebAuthn> | undefined;
const webauthn = () => (library ??= import("@simplewebauthn/server"));

/** A passkey the provider accepted: whose it is and what the session may say about it. */
export interface PasskeyProof {
  userId: string;
  passkey: PasskeyRow;
  /** `passkey` (the ACR policy's method), `hwk` or `swk` (see amrOf), and `user` (user verification). */
  amr: string[];
}

/** The ACR policy's name for a sign-in or step-up with a passkey. */
export const passkeyMethod: AuthMethod = "passkey";

/**
 * What a passkey's use says in `amr` (RFC 8176): `swk` for a credential that
 * may be copied off its device (backup eligible: a synced passkey, whose key
 * lives in a cloud keychain), `hwk` for one bound to its authenticator (a
 * security key, a device-bound platform key); `user`, as every ceremony
 * requires user verification. Eligibility is fixed when the passkey is made,
 * so the same passkey always says the same.
 */
export function amrOf(passkey: Pick<PasskeyRow, "backupEligible">): string[] {
  return [passkeyMethod, passkey.backupEligible ? "swk" : "hwk", "user"];
}

/** The longest name a passkey may have. */
export const maxPasskeyNameLength = 64;

/** A transport the browser named, if it is one WebAuthn knows (others are dropped, they would only confuse a later ceremony). */
const knownTransports = new Set<string>(["ble", "cable", "hybrid", "internal", "nfc", "smart-card", "usb"]);

/**
 * Passkeys (WebAuthn) of end users: adding one after sign-in, and signing in
 * or stepping up with one. Every ceremony uses a challenge bound to its page
 * and used once; attestation is not asked for (`none`): any authenticator
 * that verifies its user is accepted, and the page cannot tell which make it
 * is. User verification is required at every ceremony.
 */
export class Passkeys {
  constructor(
    private readonly store: PasskeyStore,
    readonly challenges: PasskeyChallenges,
    readonly relyingParty: RelyingParty,
    private readonly clock: Clock,
  ) {}

  list(userId: string): Promise<PasskeyRow[]> {
    return this.store.listPasskeys(userId);
  }

  /** False when the user has no such passkey (another user's answers the same). */
  remove(userId: string, credentialId: string): Promise<boolean> {
    return this.store.deletePasskey(userId, credentialId);
  }

  /** The ACR policy's methods the user's passkeys can perform: `passkey` when there is one. */
  async methodsOf(userId: string): Promise<AuthMethod[]> {
    return (await this.store.listPasskeys(userId)).length > 0 ? [passkeyMethod] : [];
  }

  /**
   * What the browser needs to make a passkey for the user: a new challenge
   * bound to `binding`, the user's random handle (the same for all their
   * passkeys), and their passkeys to exclude (one authenticator, one passkey).
   * `existing`: the user's passkeys, when the caller has just read them.
   */
  async registrationOptions(user: OidcUserRow, binding: CeremonyBinding, existing?: readonly PasskeyRow[]): Promise<PublicKeyCredentialCreationOptionsJSON> {
    existing ??= await this.store.listPasskeys(user.id);
    const userHandle = existing[0]?.userHandle ?? randomBytes(32).toString("base64url");
    const challenge = await this.challenges.issue("registration", binding, { userHandle });
    const { generateRegistrationOptions } = await webauthn();
    return generateRegistrationOptions({
      rpName: this.relyingParty.name,
      rpID: this.relyingParty.id,
      userName: user.login,
      userDisplayName: user.name ?? user.login,
      userID: Buffer.from(userHandle, "base64url"),
      // As octets: a string would be taken as UTF-8 text and encoded again.
      challenge: Buffer.from(challenge, "base64url"),
      attestationType: "none",
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports as AuthenticatorTransport[] })),
      authenticatorSelection: { residentKey: "preferred", userVerification: "required" },
      timeout: 5 * 60_000,
    });
  }

  /** Checks the browser's new credential against the challenge and keeps it under the name given. */
  async register(binding: CeremonyBinding, user: OidcUserRow, responseText: string, name: string): Promise<PasskeyRow> {
    const cleanName = checkName(name);
    const response = parseRegistrationResponse(responseText);
    const challenge = challengeOf(response);
    const { userHandle } = await this.challenges.consume("registration", binding, challenge);
    const { verifyRegistrationResponse } = await webauthn();
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: [...this.relyingParty.origins],
        expectedRPID: this.relyingParty.id,
        requireUserVerification: true,
      });
    } catch {
      throw verificationFailed();
    }
    if (!verified.verified) throw verificationFailed();
    const { credential, credentialDeviceType, credentialBackedUp } = verified.registrationInfo;
    const row: PasskeyRow = {
      credentialId: credential.id,
      userId: user.id,
      userHandle,
      publicKey: Buffer.from(credential.publicKey).toString("base64url"),
      signCount: credential.counter,
      transports: (credential.transports ?? []).filter((t) => knownTransports.has(t)),
      backupEligible: credentialDeviceType === "multiDevice",
      backedUp: credentialBackedUp,
      name: cleanName,
      createdAt: this.clock(),
      lastUsedAt: null,
    };
    if (!(await this.store.insertPasskey(row))) throw new PasskeyError("already_registered", "This passkey is already registered.");
    return row;
  }

  /**
   * What the browser needs to sign in or step up: a new challenge bound to
   * `binding`; for a step-up (`userId`), the user's passkeys to choose from,
   * for a sign-in none (the authenticator offers its discoverable ones);
   * `known`: those passkeys, when the caller has just read them.
   */
  async authenticationOptions(binding: CeremonyBinding, userId?: string, known?: readonly PasskeyRow[]): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const allow = userId === undefined ? [] : (known ?? (await this.store.listPasskeys(userId)));
    const challenge = await this.challenges.issue("authentication", binding, {});
    const { generateAuthenticationOptions } = await webauthn();
    return generateAuthenticationOptions({
      rpID: this.relyingParty.id,
      challenge: Buffer.from(challenge, "base64url"),
      userVerification: "required",
      allowCredentials: allow.map((p) => ({ id: p.credentialId, transports: p.transports as AuthenticatorTransport[] })),
      timeout: 5 * 60_000,
    });
  }

  /**
   * Checks an assertion: the challenge is used up first (a replay finds it
   * used), then the credential must be registered (to `expectedUserId` at a
   * step-up), its user handle the registered one, origin, RP ID, user
   * verification and signature right. Then the signature counter: a counter
   * that stays 0 is normal (synced passkeys keep none); one that does not go
   * up from a non-zero value means another copy of the key signed meanwhile,
   * and is refused (counter_went_back). The new counter is stored only if no
   * other use stored one meanwhile.
   */
  async authenticate(binding: CeremonyBinding, responseText: string, expectedUserId?: string): Promise<PasskeyProof> {
    const response = parseAuthenticationResponse(responseText);
    const challenge = challengeOf(response);
    await this.challenges.consume("authentication", binding, challenge);
    const passkey = await this.store.findPasskey(response.id);
    if (!passkey) throw new PasskeyError("passkey_unknown", "This passkey is not registered here (it may have been removed).");
    if (expectedUserId !== undefined && passkey.userId !== expectedUserId) {
      throw new PasskeyError("passkey_other_user", "This passkey belongs to another account.");
    }
    if (response.response.userHandle !== undefined && response.response.userHandle !== passkey.userHandle) throw verificationFailed();
    const { verifyAuthenticationResponse } = await webauthn();
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: [...this.relyingParty.origins],
        expectedRPID: this.relyingParty.id,
        // The library's own counter check comes before the signature's: ours comes after it (below), so only the key's holder can trip it.
        credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, "base64url"), counter: 0 },
        requireUserVerification: true,
      });
    } catch {
      throw verificationFailed();
    }
    if (!verified.verified || !verified.authenticationInfo.userVerified) throw verificationFailed();
    const { newCounter, credentialBackedUp } = verified.authenticationInfo;
    if ((newCounter > 0 || passkey.signCount > 0) && newCounter <= passkey.signCount) {
      throw new PasskeyError("counter_went_back", "This passkey's signature counter went back: it may have been copied.", {
        credentialId: passkey.credentialId,
        userId: passkey.userId,
      });
    }
    const usedAt = this.clock();
    if (!(await this.store.recordUse(passkey.credentialId, passkey.signCount, { signCount: newCounter, backedUp: credentialBackedUp, usedAt }))) {
      throw verificationFailed();
    }
    const used = { ...passkey, signCount: newCounter, backedUp: credentialBackedUp, lastUsedAt: usedAt };
    return { userId: passkey.userId, passkey: used, amr: amrOf(passkey) };
  }
}

function verificationFailed(): PasskeyError {
  return new PasskeyError("verification_failed", "The passkey could not be verified.");
}

/** 1 to 64 characters, no control characters; spaces around are dropped. */
function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "" || [...trimmed].length > maxPasskeyNameLength || /\p{Cc}/u.test(trimmed)) {
    throw new PasskeyError("name_invalid", `A passkey's name is 1 to ${maxPasskeyNameLength} characters.`);
  }
  return trimmed;
}

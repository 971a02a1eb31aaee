import type { Clock } from "../../clock.ts";
import type { OneTimeKind, OneTimePayloads, OneTimeStore } from "../../single-use.ts";
import { randomToken, sha256Hex } from "../flow/secrets.ts";
import { PasskeyError } from "./passkey-error.ts";

/**
 * What a ceremony's challenge is bound to, by the hash of its id: the
 * interaction (sign-in and step-up in an authorization request), the session
 * (adding a passkey) or the browser (the account pages' sign-in). A challenge
 * of one binding is unknown to every other.
 */
export type CeremonyBinding = { interactionId: string } | { sessionId: string } | { browserId: string };

export type Ceremony = "registration" | "authentication";

function ownerOf(binding: CeremonyBinding): string {
  if ("interactionId" in binding) return `interaction:${sha256Hex(binding.interactionId)}`;
  if ("sessionId" in binding) return `session:${sha256Hex(binding.sessionId)}`;
  return `browser:${sha256Hex(binding.browserId)}`;
}

/** The single-use record kind of each ceremony (src/domain/one-time-kinds.ts). */
const kinds = { registration: "webauthn_registration", authentication: "webauthn_authentication" } as const satisfies Record<Ceremony, OneTimeKind>;
type KindOf<C extends Ceremony> = (typeof kinds)[C];

/**
 * WebAuthn challenges: 256 random bits (base64url, as WebAuthn carries
 * them), stored by hash with their binding and ceremony, consumed by one
 * atomic statement, so a replayed or second use finds it used.
 */
export class PasskeyChallenges {
  constructor(
    private readonly records: OneTimeStore,
    private readonly lifetimeMs: number,
    private readonly clock: Clock,
  ) {}

  /** A new challenge; `payload` is kept with it (the user handle of a registration) and given back when it is used. */
  async issue<C extends Ceremony>(ceremony: C, binding: CeremonyBinding, payload: OneTimePayloads[KindOf<C>]): Promise<string> {
    const challenge = randomToken();
    const kind: KindOf<C> = kinds[ceremony];
    await this.records.issue({ kind, keyHash: sha256Hex(challenge), owner: ownerOf(binding), payload, now: this.clock(), ttlMs: this.lifetimeMs });
    return challenge;
  }

  /** Uses the challenge up and gives back its payload; one of another binding or ceremony is answered like an unknown one and left as it was. */
  async consume<C extends Ceremony>(ceremony: C, binding: CeremonyBinding, challenge: string): Promise<OneTimePayloads[KindOf<C>]> {
    const kind: KindOf<C> = kinds[ceremony];
    const result = /^[A-Za-z0-9_-]{43}$/.test(challenge)
      ? await this.records.consume(kind, sha256Hex(challenge), this.clock(), ownerOf(binding))
      : ({ ok: false, reason: "unknown" } as const);
    if (result.ok) return result.record.payload;
    const why = result.reason === "consumed" ? "was already used" : result.reason === "expired" ? "has expired" : "is not one this page issued";
    throw new PasskeyError("challenge_invalid", `The passkey challenge ${why}.`);
  }
}

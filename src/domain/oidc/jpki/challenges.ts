import { createHash } from "node:crypto";
import type { Clock } from "../../clock.ts";
import type { OneTimeStore } from "../../single-use.ts";
import { randomToken, sha256Hex } from "../flow/secrets.ts";
import { JpkiError } from "./jpki-error.ts";

const kind = "jpki_challenge";

/**
 * What a challenge is bound to: the interaction (sign-in, step-up) or the
 * session (linking a certificate), by the hash of its id. A challenge of one
 * binding is unknown to every other.
 */
export type ChallengeBinding = { interactionId: string } | { sessionId: string };

function ownerOf(binding: ChallengeBinding): string {
  return "interactionId" in binding ? `interaction:${sha256Hex(binding.interactionId)}` : `session:${sha256Hex(binding.sessionId)}`;
}

/**
 * The text the signing app signs: fixed words and the random value, so that a
 * signature made for shomei cannot be mistaken for a signature over anything
 * else the card holder signs.
 */
export function challengeText(challenge: string): string {
  return `shomei JPKI sign-in ${challenge}`;
}

/** The digest the card signs: SHA-256 of the challenge text's UTF-8 octets (what `openssl dgst -sha256 -sign` and WebCrypto compute). */
export function challengeDigest(challenge: string): Buffer {
  return createHash("sha256").update(challengeText(challenge), "utf8").digest();
}

/**
 * Fresh single-use challenges: 256 random bits, stored by hash with their
 * binding, consumed by one atomic statement (a replay, a second tab or a
 * concurrent submit finds it used).
 */
export class JpkiChallenges {
  constructor(
    private readonly records: OneTimeStore,
    private readonly lifetimeMs: number,
    private readonly clock: Clock,
  ) {}

  async issue(binding: ChallengeBinding): Promise<string> {
    const challenge = randomToken();
    await this.records.issue({ kind, keyHash: sha256Hex(challenge), owner: ownerOf(binding), payload: {}, now: this.clock(), ttlMs: this.lifetimeMs });
    return challenge;
  }

  /** Uses the challenge up; one of another binding is answered exactly like an unknown one and left as it was. */
  async consume(binding: ChallengeBinding, challenge: string): Promise<void> {
    const result = /^[A-Za-z0-9_-]{43}$/.test(challenge)
      ? await this.records.consume(kind, sha256Hex(challenge), this.clock(), ownerOf(binding))
      : ({ ok: false, reason: "unknown" } as const);
    if (result.ok) return;
    const wording = result.reason === "consumed" ? "challenge_used" : result.reason === "expired" ? "challenge_expired" : "challenge_invalid";
    const why = result.reason === "consumed" ? "was already used" : result.reason === "expired" ? "has expired" : "is not one this page issued";
    throw new JpkiError("challenge_invalid", `The challenge ${why}. Sign the new challenge shown on this page.`, wording);
  }
}

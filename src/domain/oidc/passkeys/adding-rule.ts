import { acrForMethods, acrRank, strongestReachable, type AcrPolicy, type AuthMethod } from "../acr.ts";

/** How recent a confirmation must be to add a passkey when the user has stronger ways than a password. */
export const recentConfirmationMs = 15 * 60_000;

/**
 * Whether the signed-in user may add a passkey now, or the level they must
 * first confirm at. A passkey earns a level of its own (built in: `high`),
 * so whoever holds only the password of an account that has a stronger way
 * (a one-time code, a card, a passkey) must not turn it into that level:
 * such a user must have reached the passkey's level (or the strongest they
 * can reach, if lower) within the last 15 minutes. A user whose strongest
 * way is the password may add one with any session: it is how they move
 * beyond it.
 */
export function levelToConfirmBeforeAdding(
  policy: AcrPolicy,
  session: { acr: string; authTime: number },
  enrolled: readonly AuthMethod[],
  now: number,
): string | undefined {
  const strongest = strongestReachable(policy, enrolled);
  if (strongest === undefined) return undefined;
  const strongestRank = acrRank(policy, strongest)!;
  const passwordLevel = acrForMethods(policy, ["pwd"]);
  if (passwordLevel !== undefined && strongestRank <= acrRank(policy, passwordLevel)!) return undefined;
  const passkeyLevel = acrForMethods(policy, ["passkey"]);
  const target = passkeyLevel !== undefined && acrRank(policy, passkeyLevel)! < strongestRank ? passkeyLevel : strongest;
  const recent = session.authTime <= now && now - session.authTime <= recentConfirmationMs;
  const sessionRank = acrRank(policy, session.acr);
  return recent && sessionRank !== undefined && sessionRank >= acrRank(policy, target)! ? undefined : target;
}

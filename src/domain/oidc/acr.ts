/**
 * Authentication Context Class References (ACR) as an ordered policy.
 *
 * Levels are ordered weakest first; a session at a higher level satisfies a
 * request for a lower one. Which authentication methods (RFC 8176 `amr`
 * values) earn which level is data in the policy, not code.
 *
 * `acr_values` (OpenID Connect Core 3.1.2.1) is a space-separated list in order
 * of preference and requests a voluntary claim. A session satisfies it when its
 * level is at least the lowest *known* requested level. Requested values the
 * policy does not know are ignored; a request made only of unknown values
 * places no requirement (any session satisfies it), as for a request without
 * `acr_values`. The ID token's `acr` claim tells the client what it got.
 */

/** Authentication methods, named by their RFC 8176 `amr` values. */
export type AuthMethod = "pwd" | "otp";

export const authMethods: readonly AuthMethod[] = ["pwd", "otp"];

/** Completing every method in `requires` earns the level `acr`. */
export interface AcrMethodRule {
  readonly acr: string;
  readonly requires: readonly AuthMethod[];
}

export interface AcrPolicy {
  /** Known levels, weakest first. */
  readonly levels: readonly string[];
  /** Which combinations of methods earn which level. */
  readonly rules: readonly AcrMethodRule[];
}

export const defaultAcrLevels: readonly string[] = ["low", "high", "very_high"];

/** Password alone earns `low`; password and TOTP earn `high`; nothing earns `very_high` yet. */
export const defaultAcrRules: readonly AcrMethodRule[] = [
  { acr: "low", requires: ["pwd"] },
  { acr: "high", requires: ["pwd", "otp"] },
];

/**
 * Builds a policy, checking it is coherent: at least one level, no duplicate
 * or empty level, every rule names a known level and at least one method.
 */
export function createAcrPolicy(levels: readonly string[], rules: readonly AcrMethodRule[]): AcrPolicy {
  if (levels.length === 0) throw new RangeError("an ACR policy needs at least one level");
  const seen = new Set<string>();
  for (const level of levels) {
    if (level === "" || /\s/.test(level)) throw new RangeError(`invalid ACR level ${JSON.stringify(level)}`);
    if (seen.has(level)) throw new RangeError(`duplicate ACR level ${JSON.stringify(level)}`);
    seen.add(level);
  }
  for (const rule of rules) {
    if (!seen.has(rule.acr)) throw new RangeError(`ACR rule names unknown level ${JSON.stringify(rule.acr)}`);
    if (rule.requires.length === 0) throw new RangeError(`ACR rule for ${JSON.stringify(rule.acr)} requires no method`);
  }
  return Object.freeze({
    levels: Object.freeze([...levels]),
    rules: Object.freeze(rules.map((r) => Object.freeze({ acr: r.acr, requires: Object.freeze([...r.requires]) }))),
  });
}

export const defaultAcrPolicy: AcrPolicy = createAcrPolicy(defaultAcrLevels, defaultAcrRules);

/** Splits an `acr_values` parameter (space-separated) into its values, in order; absent or blank gives []. */
export function parseAcrValues(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return raw.split(" ").filter((v) => v !== "");
}

/** The position of a level in the policy (0 = weakest), or undefined for an unknown value. */
export function acrRank(policy: AcrPolicy, acr: string): number | undefined {
  const i = policy.levels.indexOf(acr);
  return i < 0 ? undefined : i;
}

export function isKnownAcr(policy: AcrPolicy, acr: string): boolean {
  return acrRank(policy, acr) !== undefined;
}

/** The known requested levels, in request order, without duplicates. */
export function knownRequestedAcrs(policy: AcrPolicy, requested: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of requested) if (isKnownAcr(policy, value) && !out.includes(value)) out.push(value);
  return out;
}

/** The lowest known requested level: the least a session must reach. Undefined when nothing known is requested. */
export function minimumRequestedAcr(policy: AcrPolicy, requested: readonly string[]): string | undefined {
  let best: number | undefined;
  for (const value of requested) {
    const r = acrRank(policy, value);
    if (r !== undefined && (best === undefined || r < best)) best = r;
  }
  return best === undefined ? undefined : policy.levels[best];
}

/**
 * Whether a session at level `have` satisfies `acr_values` `requested`: true
 * when no known level is requested, otherwise when `have` is a known level at
 * least the lowest known requested one. An unknown `have` satisfies no known
 * request.
 */
export function satisfies(policy: AcrPolicy, have: string, requested: readonly string[]): boolean {
  const minimum = minimumRequestedAcr(policy, requested);
  if (minimum === undefined) return true;
  const haveRank = acrRank(policy, have);
  return haveRank !== undefined && haveRank >= (acrRank(policy, minimum) as number);
}

/**
 * The level earned by completing the methods `used` (an `amr` list; values
 * outside the policy's rules, such as `mfa`, are ignored): the strongest rule
 * all of whose methods were used. Undefined when no rule is met.
 */
export function acrForMethods(policy: AcrPolicy, used: readonly string[]): string | undefined {
  let best: number | undefined;
  for (const rule of policy.rules) {
    if (!rule.requires.every((m) => used.includes(m))) continue;
    const r = acrRank(policy, rule.acr) as number;
    if (best === undefined || r > best) best = r;
  }
  return best === undefined ? undefined : policy.levels[best];
}

/** The strongest level a user with these enrolled methods can reach, or undefined when none. */
export function strongestReachable(policy: AcrPolicy, enrolled: readonly AuthMethod[]): string | undefined {
  return acrForMethods(policy, enrolled);
}

/**
 * Every level a user with these enrolled methods can reach, weakest first:
 * each level up to the strongest reachable one (an authentication at a higher
 * level satisfies a lower request).
 */
export function reachableAcrs(policy: AcrPolicy, enrolled: readonly AuthMethod[]): string[] {
  const strongest = strongestReachable(policy, enrolled);
  if (strongest === undefined) return [];
  return policy.levels.slice(0, (acrRank(policy, strongest) as number) + 1);
}

/**
 * The level to ask for on the re-authentication page: the lowest known
 * requested level the user can reach (some reachable level is at least as
 * strong), or, when no known level is requested, the weakest level the user
 * can reach. Undefined when the user can reach no acceptable level.
 */
export function acrToRequest(policy: AcrPolicy, requested: readonly string[], reachable: readonly string[]): string | undefined {
  let top: number | undefined;
  let bottom: number | undefined;
  for (const level of reachable) {
    const r = acrRank(policy, level);
    if (r === undefined) continue;
    if (top === undefined || r > top) top = r;
    if (bottom === undefined || r < bottom) bottom = r;
  }
  if (top === undefined || bottom === undefined) return undefined;
  const minimum = minimumRequestedAcr(policy, requested);
  if (minimum === undefined) return policy.levels[bottom];
  return (acrRank(policy, minimum) as number) <= top ? minimum : undefined;
}

/**
 * The methods to ask for to reach at least `target` with the methods the user
 * has enrolled: those of the weakest sufficient rule the user can complete
 * (fewest steps first among rules of the same level, in policy order).
 * Undefined when no enrolled combination reaches `target`.
 */
export function methodsToReach(policy: AcrPolicy, target: string, enrolled: readonly AuthMethod[]): readonly AuthMethod[] | undefined {
  const targetRank = acrRank(policy, target);
  if (targetRank === undefined) return undefined;
  let chosen: AcrMethodRule | undefined;
  let chosenRank = Infinity;
  for (const rule of policy.rules) {
    const r = acrRank(policy, rule.acr) as number;
    if (r < targetRank || !rule.requires.every((m) => enrolled.includes(m))) continue;
    if (r < chosenRank || (r === chosenRank && chosen !== undefined && rule.requires.length < chosen.requires.length)) {
      chosen = rule;
      chosenRank = r;
    }
  }
  return chosen?.requires;
}

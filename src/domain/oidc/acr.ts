/**
 * Authentication Context Class References (ACR) as an ordered policy.
 *
 * Levels are ordered weakest first; a session at a higher level satisfies a
 * request for a lower one. Which authentication methods (RFC 8176 `amr`
 * values) earn which level is data in the policy, not code.
 *
 * Each level has a name and may have aliases (other names clients use for the
 * same level, such as URNs); every function here takes either.
 *
 * `acr_values` (OpenID Connect Core 3.1.2.1) is a space-separated list in order
 * of preference and requests a voluntary claim. A session satisfies it when its
 * level is at least the lowest *known* requested level. Requested values the
 * policy does not know are ignored next to known ones; a request made only of
 * unknown values is refused by the decision flow (unmet_authentication_requirements).
 * The ID token's `acr` claim tells the client what it got, in the client's own
 * words (see reportedAcr).
 */

/**
 * Authentication methods, named by the `amr` values they put in tokens:
 * RFC 8176 `pwd` and `otp`, and a JPKI card's signature with its signature
 * certificate (`jpki_sig`) or its user authentication certificate
 * (`jpki_auth`), which also add RFC 8176 `hwk` and `sc` to `amr`; and a
 * passkey with user verification (`passkey`), which adds `hwk` or `swk` and
 * `user` (src/domain/oidc/passkeys/passkeys.ts, amrOf).
 */
export type AuthMethod = "pwd" | "otp" | "jpki_sig" | "jpki_auth" | "passkey";

export const authMethods: readonly AuthMethod[] = ["pwd", "otp", "jpki_sig", "jpki_auth", "passkey"];

/** Completing every method in `requires` earns the level `acr`. */
export interface AcrMethodRule {
  readonly acr: string;
  readonly requires: readonly AuthMethod[];
}

export interface AcrPolicy {
  /** Known levels by name, weakest first. */
  readonly levels: readonly string[];
  /** Other names of the levels: alias → level name. */
  readonly aliases: ReadonlyMap<string, string>;
  /** Which combinations of methods earn which level. */
  readonly rules: readonly AcrMethodRule[];
}

export const defaultAcrLevels: readonly string[] = ["low", "high", "very_high"];

/**
 * Password alone earns `low`; password and TOTP, a passkey (possession
 * and user verification in one phishing-resistant step), or a JPKI user
 * authentication certificate's signature, earn `high`; a JPKI signature
 * certificate's signature earns `very_high`.
 */
export const defaultAcrRules: readonly AcrMethodRule[] = [
  { acr: "low", requires: ["pwd"] },
  { acr: "high", requires: ["pwd", "otp"] },
  { acr: "high", requires: ["passkey"] },
  { acr: "high", requires: ["jpki_auth"] },
  { acr: "very_high", requires: ["jpki_sig"] },
];

/**
 * The longest level name or alias: an `acr` is stored with sessions and
 * tokens (64 characters), and URNs of this length are already generous.
 */
export const maxAcrNameLength = 64;
/** Printable ASCII without space: `acr_values` is space-separated. */
const acrNamePattern = /^[\x21-\x7e]+$/;

/**
 * Builds a policy, checking it is coherent: at least one level; names and
 * aliases of 1 to 64 printable characters without spaces, each used once
 * across all levels; aliases of known levels; every rule names a known level
 * and at least one method.
 */
export function createAcrPolicy(
  levels: readonly string[],
  rules: readonly AcrMethodRule[],
  aliases: Readonly<Record<string, readonly string[]>> = {},
): AcrPolicy {
  if (levels.length === 0) throw new RangeError("an ACR policy needs at least one level");
  const seen = new Set<string>();
  const use = (name: string, what: string) => {
    if (name.length > maxAcrNameLength || !acrNamePattern.test(name)) {
      throw new RangeError(`invalid ACR ${what} ${JSON.stringify(name)} (1 to ${maxAcrNameLength} printable characters, no spaces)`);
    }
    if (seen.has(name)) throw new RangeError(`ACR name ${JSON.stringify(name)} is used twice`);
    seen.add(name);
  };
  for (const level of levels) use(level, "level");
  const aliasMap = new Map<string, string>();
  for (const [level, names] of Object.entries(aliases)) {
    if (!levels.includes(level)) throw new RangeError(`ACR aliases name unknown level ${JSON.stringify(level)}`);
    for (const alias of names) {
      use(alias, "alias");
      aliasMap.set(alias, level);
    }
  }
  for (const rule of rules) {
    if (!levels.includes(rule.acr)) throw new RangeError(`ACR rule names unknown level ${JSON.stringify(rule.acr)}`);
    if (rule.requires.length === 0) throw new RangeError(`ACR rule for ${JSON.stringify(rule.acr)} requires no method`);
  }
  return Object.freeze({
    levels: Object.freeze([...levels]),
    aliases: aliasMap,
    rules: Object.freeze(rules.map((r) => Object.freeze({ acr: r.acr, requires: Object.freeze([...r.requires]) }))),
  });
}

/** Every value a client may send in `acr_values`, weakest level first, each name followed by its aliases (for discovery). */
export function acrValuesSupported(policy: AcrPolicy): string[] {
  return policy.levels.flatMap((level) => [level, ...[...policy.aliases].filter(([, of]) => of === level).map(([alias]) => alias)]);
}

export const defaultAcrPolicy: AcrPolicy = createAcrPolicy(defaultAcrLevels, defaultAcrRules);

/** Splits an `acr_values` parameter (space-separated) into its values, in order; absent or blank gives []. */
export function parseAcrValues(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return raw.split(" ").filter((v) => v !== "");
}

/** The position of a level, by name or alias, in the policy (0 = weakest), or undefined for an unknown value. */
export function acrRank(policy: AcrPolicy, acr: string): number | undefined {
  const i = policy.levels.indexOf(policy.aliases.get(acr) ?? acr);
  return i < 0 ? undefined : i;
}

export function isKnownAcr(policy: AcrPolicy, acr: string): boolean {
  return acrRank(policy, acr) !== undefined;
}

/**
 * What the ID token's `acr` says for a session at level `have`: the first
 * requested value (in the client's order of preference, name or alias as the
 * client wrote it) that the session satisfies, so a client that asked for
 * `urn:example:acr:high` reads that back rather than a name it does not know.
 * Without such a value (nothing requested, or only unknown ones), the
 * session's own level.
 */
export function reportedAcr(policy: AcrPolicy, have: string, requested: readonly string[]): string {
  const haveRank = acrRank(policy, have);
  if (haveRank === undefined) return have;
  for (const value of requested) {
    const rank = acrRank(policy, value);
    if (rank !== undefined && rank <= haveRank) return value;
  }
  return have;
}

/** The known requested values (names or aliases), in request order, without duplicates. */
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

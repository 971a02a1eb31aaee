import { readFileSync } from "node:fs";
import { z } from "zod";
import { DomainError } from "../../domain/errors.ts";
import { authMethods, createAcrPolicy, maxAcrNameLength, type AcrMethodRule, type AcrPolicy, type AuthMethod } from "../../domain/oidc/acr.ts";

const acrName = z
  .string({ error: "must be a string" })
  .regex(/^[\x21-\x7e]+$/, { error: "must be printable ASCII without spaces" })
  .max(maxAcrNameLength, { error: `must be at most ${maxAcrNameLength} characters` });

const method = z.enum(authMethods as [AuthMethod, ...AuthMethod[]], { error: `must be one of ${authMethods.join(", ")}` });

const fileSchema = z
  .object({
    levels: z
      .array(
        z
          .object({
            name: acrName,
            aliases: z.array(acrName, { error: "must be a list of names" }).optional(),
            methods: z
              .array(z.array(method, { error: "must be a list of methods" }).min(1, { error: "must name at least one method" }), {
                error: "must be a list of method combinations, such as [[\"pwd\", \"otp\"]]",
              })
              .optional(),
          })
          .strict(),
        { error: "must be a list of levels" },
      )
      .min(1, { error: "must list at least one level" }),
  })
  .strict();

function fail(file: string, message: string): DomainError {
  return new DomainError("invalid_field", `ACR policy file ${file}: ${message}`, "acrPolicyFile");
}

/**
 * The ACR policy of SHOMEI_ACR_POLICY_FILE: a JSON file
 *
 *   { "levels": [
 *       { "name": "low",  "aliases": ["urn:example:acr:low"],  "methods": [["pwd"]] },
 *       { "name": "high", "aliases": ["urn:example:acr:high"], "methods": [["pwd", "otp"]] },
 *       { "name": "very_high" } ] }
 *
 * Levels weakest first. Each entry of `methods` is a combination of methods
 * (RFC 8176 `amr` values) that together earn the level; a level without
 * `methods` is known but earned by nothing. Anything wrong is one clear error,
 * and the server does not start.
 */
export function loadAcrPolicyFile(file: string): AcrPolicy {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw fail(file, e.code ? `cannot read it (${e.code})` : `not valid JSON (${e.message})`);
  }
  const parsed = fileSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw fail(file, `${issue.path.join(".") || "the document"} ${issue.message}`);
  }
  const levels = parsed.data.levels;
  const rules: AcrMethodRule[] = levels.flatMap((level) => (level.methods ?? []).map((requires) => ({ acr: level.name, requires })));
  const aliases = Object.fromEntries(levels.map((level) => [level.name, level.aliases ?? []]));
  try {
    return createAcrPolicy(levels.map((l) => l.name), rules, aliases);
  } catch (error) {
    throw fail(file, (error as Error).message);
  }
}

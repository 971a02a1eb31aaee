import * as z from "zod";
import { readJsonFile } from "./json-file.ts";
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
  const document = readJsonFile(file, fileSchema, fail);
  const levels = document.levels;
  const rules: AcrMethodRule[] = levels.flatMap((level) => (level.methods ?? []).map((requires) => ({ acr: level.name, requires })));
  const aliases = Object.fromEntries(levels.map((level) => [level.name, level.aliases ?? []]));
  try {
    return createAcrPolicy(levels.map((l) => l.name), rules, aliases);
  } catch (error) {
    throw fail(file, (error as Error).message);
  }
}

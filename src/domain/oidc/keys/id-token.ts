import { createHash } from "node:crypto";
import { SignJWT, type JWTPayload } from "jose";
import type { SigningAlg, SigningKeys } from "./signing-keys.ts";

/** The claims of an ID token (OIDC Core 2). Times are NumericDate: seconds since the epoch. */
export interface IdTokenClaims {
  iss: string;
  sub: string;
  aud: string | string[];
  /** Required by this function when aud has more than one entry. */
  azp?: string;
  exp: number;
  iat: number;
  auth_time: number;
  nonce?: string;
  acr: string;
  amr: string[];
  at_hash?: string;
  sid?: string;
  /** The user's name, in the language claims_locales asked for. */
  name?: string | undefined;
  /** Language-tagged names (OIDC Core 5.2), e.g. `name#ja-Kana-JP`. */
  [tagged: `name#${string}`]: string | undefined;
  /** Whether the user has a current, good JPKI certificate linked; never anything of the certificate itself. */
  jpki_verified?: boolean;
}

/** Seconds beyond this are almost certainly milliseconds passed by mistake (year 5138). */
const maxNumericDate = 1e11;

/**
 * Signs an ID token with the active signing key of `alg` (the client's
 * id_token_signed_response_alg): a compact JWS whose header carries alg, kid
 * and typ "JWT". Claims left undefined are omitted. With `accessToken`,
 * at_hash is added, hashed as alg requires.
 */
export async function signIdToken(keys: SigningKeys, claims: IdTokenClaims, options: { alg: SigningAlg; accessToken?: string }): Promise<string> {
  checkClaims(claims);
  const payload: JWTPayload = {};
  for (const [name, value] of Object.entries(claims)) {
    if (value !== undefined) payload[name] = value;
  }
  const key = await keys.active(options.alg);
  if (options.accessToken !== undefined) payload.at_hash = atHash(options.accessToken, key.alg);
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" }).sign(key.privateKey);
}

const hashes: Record<SigningAlg, string> = { ES256: "sha256", RS256: "sha256" };

/**
 * at_hash (OIDC Core 3.1.3.6; c_hash is computed the same way): the hash of
 * the access token's ASCII octets with the hash of the ID token's alg, left
 * half, base64url without padding.
 */
export function atHash(accessToken: string, alg: SigningAlg): string {
  const hash = hashes[alg];
  if (!hash) throw new TypeError(`no at_hash hash function for alg ${JSON.stringify(alg)}`);
  if (!/^[\x20-\x7e]+$/.test(accessToken)) throw new TypeError("an access token is non-empty printable ASCII");
  const digest = createHash(hash).update(accessToken, "ascii").digest();
  return digest.subarray(0, digest.length / 2).toString("base64url");
}

function checkClaims(c: IdTokenClaims): void {
  for (const name of ["iss", "sub", "acr"] as const) {
    if (typeof c[name] !== "string" || c[name] === "") throw new TypeError(`ID token claim ${name} must be a non-empty string`);
  }
  const audiences = typeof c.aud === "string" ? [c.aud] : c.aud;
  if (!Array.isArray(audiences) || audiences.length === 0 || audiences.some((a) => typeof a !== "string" || a === "")) {
    throw new TypeError("ID token claim aud must be a client id or a non-empty array of them");
  }
  if (audiences.length > 1 && !c.azp) throw new TypeError("ID token with several audiences needs azp");
  if (c.azp !== undefined && !audiences.includes(c.azp)) throw new TypeError("ID token claim azp must be one of the audiences");
  for (const name of ["exp", "iat", "auth_time"] as const) {
    const value = c[name];
    if (!Number.isSafeInteger(value) || value < 0 || value >= maxNumericDate) {
      throw new TypeError(`ID token claim ${name} must be whole seconds since the epoch (not milliseconds)`);
    }
  }
  if (c.exp <= c.iat) throw new TypeError("ID token expires before it is issued");
  if (!Array.isArray(c.amr) || c.amr.some((m) => typeof m !== "string")) throw new TypeError("ID token claim amr must be an array of strings");
}

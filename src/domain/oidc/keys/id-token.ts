import { constants, createHash, KeyObject, sign, type SignKeyObjectInput } from "node:crypto";
import { promisify } from "node:util";
import type { CryptoKey } from "jose";
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
  const payload: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(claims)) {
    if (value !== undefined) payload[name] = value;
  }
  const key = await keys.active(options.alg);
  if (options.accessToken !== undefined) payload.at_hash = atHash(options.accessToken, key.alg);
  return await compactJws({ alg: key.alg, kid: key.kid, typ: "JWT" }, payload, key.privateKey);
}

/**
 * How node:crypto signs for each alg (a new alg fails to compile until it is
 * added here and to `claimHashes`): the digest it is given (null for EdDSA,
 * which hashes inside the signature scheme) and the key's options. ES256's
 * signature is R || S, 32 bytes each (RFC 7518 §3.4), node's "ieee-p1363"
 * encoding; RS256 is RSASSA-PKCS1-v1_5, node's default for an RSA key; PS256
 * is RSASSA-PSS with MGF1 and a salt as long as the SHA-256 digest (RFC 7518
 * §3.5), where node would otherwise use the longest salt that fits; EdDSA is
 * Ed25519 (RFC 8037).
 */
const signing: Record<SigningAlg, { digest: string | null; key(key: KeyObject): KeyObject | SignKeyObjectInput }> = {
  ES256: { digest: "sha256", key: (key) => ({ key, dsaEncoding: "ieee-p1363" }) },
  RS256: { digest: "sha256", key: (key) => key },
  PS256: { digest: "sha256", key: (key) => ({ key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }) },
  EdDSA: { digest: null, key: (key) => key },
};

/** Node's key object behind each WebCrypto key, made once per key. */
const keyObjects = new WeakMap<CryptoKey, KeyObject>();

/**
 * A compact JWS (RFC 7515 §7.1) of an ID token or a logout token: base64url of the header's and the payload's
 * JSON, and the signature over the two, made with node:crypto. jose's
 * SignJWT signs through WebCrypto: an ES256 ID token cost about 80 µs of
 * CPU that way and 21–25 µs here. The signature is made on libuv's thread
 * pool (crypto.sign with a callback), not on the event loop: the loop is what
 * a busy token endpoint runs out of first (the other core is not full), and
 * there the signature costs about 7 µs of the loop's time instead of 25
 * (refresh_token grants: 1.24x to about 1.5x node-oidc-provider's rate,
 * docs/performance.md). `signing` says how each alg is made. The tests
 * verify the tokens with jose, openssl and certified clients.
 */
export async function compactJws(header: { alg: SigningAlg; kid: string; typ: "JWT" | "logout+jwt" }, payload: Record<string, unknown>, privateKey: CryptoKey): Promise<string> {
  let key = keyObjects.get(privateKey);
  if (!key) {
    key = KeyObject.from(privateKey);
    keyObjects.set(privateKey, key);
  }
  const input = `${Buffer.from(JSON.stringify(header)).toString("base64url")}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}`;
  const how = signing[header.alg];
  const signature = await signOnPool(how.digest, Buffer.from(input), how.key(key));
  return `${input}.${signature.toString("base64url")}`;
}

/** crypto.sign with a callback: run on libuv's thread pool. */
const signOnPool = promisify(sign);

/**
 * The hash of at_hash for each alg: the one its signature uses. EdDSA names
 * no hash in JWA; Ed25519 hashes with SHA-512 (RFC 8032 §5.1), which is what
 * the OpenID Connect working group settled on for EdDSA ID tokens (its issue
 * 1125) and what node-oidc-provider, oauth4webapi and openid-client compute
 * and check: 32 bytes of a SHA-512 digest.
 */
const claimHashes: Record<SigningAlg, string> = { ES256: "sha256", RS256: "sha256", PS256: "sha256", EdDSA: "sha512" };

/**
 * at_hash (OIDC Core 3.1.3.6; c_hash is computed the same way): the hash of
 * the access token's ASCII octets with the hash of the ID token's alg, left
 * half, base64url without padding.
 */
export function atHash(accessToken: string, alg: SigningAlg): string {
  const hash = claimHashes[alg];
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

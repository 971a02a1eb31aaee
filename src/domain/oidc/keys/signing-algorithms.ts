import { generateKeyPair, type CryptoKey, type JWK } from "jose";

/**
 * The JWS algorithms the provider signs ID tokens with, in the order
 * discovery and the JWKS list them. ES256 because it is short and fast and
 * was the first; RS256 because OpenID Connect requires every provider to
 * support it (and Dynamic Registration makes it a client's default); PS256
 * and EdDSA (over Ed25519) because FAPI 2.0 allows them beside ES256 and
 * never RS256 (5.4.1), so a FAPI client that needs RSA has PS256.
 */
export const signingAlgs = ["ES256", "RS256", "PS256", "EdDSA"] as const;
export type SigningAlg = (typeof signingAlgs)[number];

/** What a client registered before id_token_signed_response_alg existed gets, and one that leaves it out. */
export const defaultSigningAlg: SigningAlg = "ES256";

/**
 * RSA modulus size, for RS256 and PS256 alike. 2048 bits is the minimum RFC 7518 §3.3 allows and what
 * relying parties expect; keys are rotated, so the size is a floor, not a
 * lifetime promise. 3072 would take several times longer to generate on
 * first use and on every rotation.
 */
const rsaModulusLength = 2048;

export function isSigningAlg(value: unknown): value is SigningAlg {
  return typeof value === "string" && (signingAlgs as readonly string[]).includes(value);
}

/** How one algorithm's keys are made and which JWK members they have. */
interface AlgorithmKeys {
  generate(): Promise<{ privateKey: CryptoKey; publicKey: CryptoKey }>;
  /** The public members, in the order RFC 7638 names them; kty is checked separately. */
  kty: PublicSigningJwk["kty"];
  publicMembers: readonly string[];
  /** The members of the private JWK that is sealed at rest. */
  privateMembers: readonly string[];
  /** Fixed public members (the curve). */
  fixed: Readonly<Record<string, string>>;
}

export const algorithmKeys: Record<SigningAlg, AlgorithmKeys> = {
  ES256: {
    generate: () => generateKeyPair("ES256", { extractable: true }),
    kty: "EC",
    publicMembers: ["crv", "x", "y"],
    privateMembers: ["crv", "x", "y", "d"],
    fixed: { crv: "P-256" },
  },
  RS256: {
    generate: () => generateKeyPair("RS256", { extractable: true, modulusLength: rsaModulusLength }),
    kty: "RSA",
    publicMembers: ["e", "n"],
    privateMembers: ["e", "n", "d", "p", "q", "dp", "dq", "qi"],
    fixed: {},
  },
  // Its own line of keys, not RS256's: RFC 7517's alg names the one algorithm a
  // published key is used with, and a key shared by two would need two entries
  // with one kid, which a relying party cannot tell apart.
  PS256: {
    generate: () => generateKeyPair("PS256", { extractable: true, modulusLength: rsaModulusLength }),
    kty: "RSA",
    publicMembers: ["e", "n"],
    privateMembers: ["e", "n", "d", "p", "q", "dp", "dq", "qi"],
    fixed: {},
  },
  // RFC 8037: an OKP key on Ed25519, the curve FAPI 2.0 and relying parties expect of EdDSA.
  EdDSA: {
    generate: () => generateKeyPair("EdDSA", { extractable: true, crv: "Ed25519" }),
    kty: "OKP",
    publicMembers: ["crv", "x"],
    privateMembers: ["crv", "x", "d"],
    fixed: { crv: "Ed25519" },
  },
};

/** A published verification key: public members only. */
export interface PublicSigningJwk extends JWK {
  kty: "EC" | "RSA" | "OKP";
  kid: string;
  alg: SigningAlg;
  use: "sig";
}

export class SigningKeyError extends Error {
  override name = "SigningKeyError";
}

export function supportedAlg(alg: string): SigningAlg {
  if (isSigningAlg(alg)) return alg;
  throw new SigningKeyError(`unsupported signing key algorithm ${JSON.stringify(alg)}`);
}

/** Only the algorithm's public members: whatever else the source holds (d, above all) is left out. */
export function publicJwk(source: Record<string, unknown>, kid: string, alg: SigningAlg): PublicSigningJwk {
  const spec = algorithmKeys[alg];
  const members: Record<string, string> = {};
  for (const name of spec.publicMembers) {
    const value = source[name];
    if (typeof value !== "string" || value === "") throw new SigningKeyError(`signing key ${kid}: stored public key lacks ${name}`);
    members[name] = value;
  }
  if (source.kty !== spec.kty || Object.entries(spec.fixed).some(([name, value]) => members[name] !== value)) {
    throw new SigningKeyError(`signing key ${kid}: stored public key is not a key for ${alg}`);
  }
  return { kty: spec.kty, ...members, kid, alg, use: "sig" };
}

/** The private JWK to seal: the algorithm's private members only (no ext, key_ops or alg from the export). */
export function privateMembers(jwk: JWK, alg: SigningAlg): Record<string, string> {
  const spec = algorithmKeys[alg];
  const members: Record<string, string> = { kty: spec.kty };
  for (const name of spec.privateMembers) {
    const value = (jwk as Record<string, unknown>)[name];
    if (typeof value !== "string") throw new SigningKeyError(`generated ${alg} key lacks ${name}`);
    members[name] = value;
  }
  return members;
}

/** True when the unsealed private JWK is whole and belongs to the stored public key. */
export function privateMatchesPublic(jwk: JWK, published: PublicSigningJwk): boolean {
  const spec = algorithmKeys[published.alg];
  const record = jwk as Record<string, unknown>;
  const publicMembers: Record<string, unknown> = { ...published };
  return (
    jwk.kty === spec.kty &&
    spec.publicMembers.every((name) => record[name] === publicMembers[name]) &&
    spec.privateMembers.every((name) => typeof record[name] === "string" && record[name] !== "")
  );
}

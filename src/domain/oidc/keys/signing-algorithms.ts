import { generateKeyPair, type CryptoKey, type JWK } from "jose";

/**
 * The JWS algorithms the provider signs ID tokens with. RS256 because OpenID
 * Connect requires every provider to support it (and Dynamic Registration
 * makes it a client's default); ES256 because it is shorter and faster and
 * was the only one until RS256 came.
 */
export const signingAlgs = ["ES256", "RS256"] as const;
export type SigningAlg = (typeof signingAlgs)[number];

/** What a client registered before id_token_signed_response_alg existed gets, and one that leaves it out. */
export const defaultSigningAlg: SigningAlg = "ES256";

/**
 * RSA modulus size. 2048 bits is the minimum RFC 7518 §3.3 allows and what
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
  kty: "EC" | "RSA";
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
};

/** A published verification key: public members only. */
export interface PublicSigningJwk extends JWK {
  kty: "EC" | "RSA";
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
    throw new SigningKeyError(`signing key ${kid}: stored public key is not an ${alg} key`);
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

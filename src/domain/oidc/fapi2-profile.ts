import type { ClientAuthMethod, OidcClient } from "./client.ts";
import type { ProofRequirements } from "./dpop/dpop-proofs.ts";
import { isHttpsRedirectUri } from "./redirect-uri.ts";

/**
 * The FAPI 2.0 Security Profile's rules for authorization servers, as the
 * `fapi2` client profile applies them (docs/fapi2.md). One table: each rule
 * names its section and the stage of the existing flow that applies it, so
 * that a FAPI client goes down the same path as any other, with these checks
 * on top. Sections are those of the FAPI 2.0 Security Profile (final):
 * 5.3.2.1 general rules, 5.3.2.2 the authorization endpoint, 5.4.1
 * cryptography.
 */

/** The JWS algorithms FAPI 2.0 allows (5.4.1): never RS256, HS*, or none. */
export const fapi2Algorithms: readonly string[] = ["PS256", "ES256", "EdDSA"];

/** What client metadata says, once parsed (client-registration.ts). */
export interface RegistrationFacts {
  tokenEndpointAuthMethod: ClientAuthMethod;
  redirectUris: readonly string[];
  idTokenSignedResponseAlg: string;
}

/** The keys a client's JWTs are verified with: its `jwks` when registered, and the set at its `jwks_uri` at each use (client-keys.ts). */
export interface ClientKeyFacts {
  keys: readonly Record<string, unknown>[];
}

/** A client assertion whose signature and claims passed (client-assertion.ts). */
export interface AssertionFacts {
  issuer: string;
  aud: unknown;
  alg: string;
}

/** A pushed authorization request's parameters, as sent (pushed-requests.ts). */
export interface PushedRequestFacts {
  params: ReadonlyMap<string, string>;
}

/** What the composition root fixed for every client (compose-oidc.ts). */
export interface ServerFacts {
  codeLifetimeSeconds: number;
  /** What a fapi2 client's request_uri is given (requestUriLifetime). */
  requestUriLifetimeSeconds: number;
  /** How far ahead of the server's clock iat and nbf may be, per kind of JWT the server accepts. */
  futureSkewSeconds: { clientAssertion: number; dpopProof: number; requestObject: number };
}

interface Facts {
  registration: RegistrationFacts;
  client_keys: ClientKeyFacts;
  client_assertion: AssertionFacts;
  pushed_request: PushedRequestFacts;
  server: ServerFacts;
}

export type Fapi2Stage = keyof Facts;

interface Row {
  /** Stable name, used in tests and docs/fapi2.md. */
  id: string;
  /** FAPI 2.0 Security Profile section (and item). */
  section: string;
  /** The rule, worded as the error description a client gets when it breaks it. */
  requirement: string;
}

/** A rule checked against facts at one stage; `field` names the metadata a registration rule is about. */
type CheckedRule = { [S in Fapi2Stage]: Row & { stage: S; field?: string; holds(facts: Facts[S]): boolean } }[Fapi2Stage];

/** A rule met by settings the profile implies on the client's registration, enforced by the checks every client has. */
type ImpliedRule = Row & { stage: "implied"; implies: Partial<Pick<OidcClient, "requirePushedAuthorizationRequests" | "dpopBoundAccessTokens">> };

/** A rule the server keeps for every client, or whose behaviour is a function below; `enforcedIn` says where. */
type BehaviourRule = Row & { stage: "behaviour"; enforcedIn: string };

export type Fapi2Rule = CheckedRule | ImpliedRule | BehaviourRule;

const within = (value: number, low: number, high: number) => value >= low && value <= high;

/** Bits of an RSA modulus given as a JWK `n` (base64url, big-endian, no sign byte). */
function modulusBits(n: unknown): number {
  if (typeof n !== "string") return 0;
  const bytes = Buffer.from(n, "base64url");
  const first = bytes.findIndex((b) => b !== 0);
  return first < 0 ? 0 : (bytes.length - first - 1) * 8 + (32 - Math.clz32(bytes[first]!));
}

export const fapi2Rules: readonly Fapi2Rule[] = [
  {
    id: "confidential-client",
    section: "5.3.2.1-3, 5.3.2.2-4",
    requirement: "the fapi2 profile is for confidential clients only",
    stage: "registration",
    field: "token_endpoint_auth_method",
    holds: (m) => m.tokenEndpointAuthMethod !== "none",
  },
  {
    id: "private-key-jwt",
    section: "5.3.2.1-6",
    requirement: "the fapi2 profile authenticates clients by private_key_jwt",
    stage: "registration",
    field: "token_endpoint_auth_method",
    holds: (m) => m.tokenEndpointAuthMethod === "private_key_jwt",
  },
  {
    id: "https-redirect-uris",
    section: "5.3.2.2-8",
    requirement: "the fapi2 profile allows https:// redirect URIs only",
    stage: "registration",
    field: "redirect_uris",
    holds: (m) => m.redirectUris.every(isHttpsRedirectUri),
  },
  {
    id: "id-token-algorithm",
    section: "5.4.1-1",
    requirement: `the fapi2 profile signs ID tokens with ${fapi2Algorithms.join(", ")} only, never RS256`,
    stage: "registration",
    field: "id_token_signed_response_alg",
    holds: (m) => fapi2Algorithms.includes(m.idTokenSignedResponseAlg),
  },
  {
    id: "key-sizes",
    section: "5.4.1-2, 5.4.1-3",
    requirement: "the fapi2 profile needs RSA keys of at least 2048 bits and elliptic curve keys of at least 224 bits",
    stage: "client_keys",
    field: "jwks",
    holds: (m) =>
      m.keys.every((k) => (k.kty === "RSA" ? modulusBits(k.n) >= 2048 : k.kty === "EC" ? ["P-256", "P-384", "P-521"].includes(k.crv as string) : k.kty === "OKP")),
  },
  {
    id: "assertion-audience",
    section: "5.3.2.1-8",
    requirement: "the fapi2 profile accepts client assertions whose aud is the issuer identifier, as a string",
    stage: "client_assertion",
    holds: (a) => a.aud === a.issuer,
  },
  {
    id: "assertion-algorithm",
    section: "5.4.1-1",
    requirement: `the fapi2 profile accepts client assertions signed with ${fapi2Algorithms.join(", ")} only`,
    stage: "client_assertion",
    holds: (a) => fapi2Algorithms.includes(a.alg),
  },
  {
    id: "par-required",
    section: "5.3.2.2-2, 5.3.2.2-3",
    requirement: "the fapi2 profile requires pushed authorization requests",
    stage: "implied",
    implies: { requirePushedAuthorizationRequests: true },
  },
  {
    id: "redirect-uri-in-par",
    section: "5.3.2.2-6",
    requirement: "the fapi2 profile requires redirect_uri in the pushed authorization request",
    stage: "pushed_request",
    holds: (p) => p.params.has("redirect_uri"),
  },
  {
    id: "pkce-s256",
    section: "5.3.2.2-5",
    requirement: "the fapi2 profile requires PKCE (code_challenge with code_challenge_method S256)",
    stage: "pushed_request",
    holds: (p) => p.params.has("code_challenge") && p.params.get("code_challenge_method") === "S256",
  },
  {
    id: "sender-constrained-tokens",
    section: "5.3.2.1-4, 5.3.2.1-5",
    requirement: "the fapi2 profile issues DPoP-bound access tokens only",
    stage: "implied",
    implies: { dpopBoundAccessTokens: true },
  },
  {
    id: "dpop-proof",
    section: "5.3.2.1-10, 5.4.1-1",
    requirement: `the fapi2 profile accepts DPoP proofs signed with ${fapi2Algorithms.join(", ")}, with a server nonce when SHOMEI_FAPI2_DPOP_REQUIRE_NONCE is set`,
    stage: "behaviour",
    enforcedIn: "fapi2ProofRequirements, applied by DpopProofs.check at PAR and the token endpoint and by TokenBinding at userinfo and grant management",
  },
  {
    id: "dpop-jkt-agrees",
    section: "5.3.2.1-12 (RFC 9449 section 10.1)",
    requirement: "dpop_jkt and the DPoP proof of a pushed authorization request must name the same key",
    stage: "behaviour",
    enforcedIn: "PushedRequests.push, for every client",
  },
  {
    id: "code-lifetime",
    section: "5.3.2.1-11",
    requirement: "authorization codes live at most 60 seconds",
    stage: "server",
    holds: (s) => within(s.codeLifetimeSeconds, 1, 60),
  },
  {
    id: "request-uri-lifetime",
    section: "5.3.2.2-12",
    requirement: "a request_uri's expires_in is between 5 and 599 seconds",
    stage: "server",
    holds: (s) => within(s.requestUriLifetimeSeconds, 5, 599),
  },
  {
    id: "jwt-clock-skew",
    section: "5.3.2.1-13",
    requirement: "JWTs dated up to 10 seconds ahead are accepted, more than 60 seconds ahead refused",
    stage: "server",
    holds: (s) => Object.values(s.futureSkewSeconds).every((skew) => within(skew, 10, 60)),
  },
  {
    id: "iss-in-authorization-response",
    section: "5.3.2.2-7 (RFC 9207)",
    requirement: "every authorization response carries iss",
    stage: "behaviour",
    enforcedIn: "flow/redirects.ts, for every client",
  },
  {
    id: "no-cors-at-authorization-endpoint",
    section: "5.3.2.2 (authorization endpoint)",
    requirement: "the authorization endpoint answers no cross-origin requests",
    stage: "behaviour",
    enforcedIn: "src/http/middleware/cors.ts (corsPaths leaves it out), for every client",
  },
  {
    id: "refresh-token-not-rotated",
    section: "5.3.2.1-9 and its note 1",
    requirement: "refresh tokens are not rotated: the same one refreshes until it expires or is revoked",
    stage: "behaviour",
    enforcedIn: "rotatesRefreshTokens, applied by TokenService.refresh",
  },
];

function isFapi2(client: Pick<OidcClient, "profile">): boolean {
  return client.profile === "fapi2";
}

/** The first rule of `stage` the facts break, or undefined. Callers apply it to fapi2 clients only. */
export function brokenRule<S extends Fapi2Stage>(stage: S, facts: Facts[S]): (Row & { field?: string }) | undefined {
  for (const rule of fapi2Rules) {
    if (rule.stage === stage && !(rule.holds as (f: Facts[S]) => boolean)(facts)) return rule;
  }
  return undefined;
}

/** The rule a fapi2 client breaks at `stage`, or undefined (always, for a client without the profile). */
export function brokenBy<S extends Fapi2Stage>(client: Pick<OidcClient, "profile">, stage: S, facts: Facts[S]): (Row & { field?: string }) | undefined {
  return isFapi2(client) ? brokenRule(stage, facts) : undefined;
}

/** The registration settings the profile implies (PAR and DPoP required), merged over the client's own. */
export function withImpliedSettings(client: OidcClient): OidcClient {
  if (!isFapi2(client)) return client;
  const implied = fapi2Rules.filter((r): r is ImpliedRule => r.stage === "implied").map((r) => r.implies);
  return Object.assign({ ...client }, ...implied) as OidcClient;
}

/** Throws at start-up when what the server was composed with cannot meet the profile. */
export function assertServerMeetsFapi2(facts: ServerFacts): void {
  const broken = brokenRule("server", facts);
  if (broken) throw new RangeError(`the server cannot hold the fapi2 profile's rule ${broken.id}: ${broken.requirement}`);
}

/** The longest expires_in a fapi2 client's request_uri gets: less than 600 seconds (5.3.2.2-12). */
export const fapi2MaxRequestUriLifetimeSeconds = 599;

/** A request_uri's lifetime for this client: the configured one, shortened below 600 seconds for fapi2 clients. */
export function requestUriLifetime(client: Pick<OidcClient, "profile">, configuredSeconds: number): number {
  return isFapi2(client) ? Math.min(configuredSeconds, fapi2MaxRequestUriLifetimeSeconds) : configuredSeconds;
}

/** What the DPoP proofs of this client's requests must meet beyond RFC 9449: FAPI's algorithms, and a nonce when the setting asks. */
export function fapi2ProofRequirements(client: Pick<OidcClient, "profile">, settings: { requireDpopNonce: boolean }): ProofRequirements {
  return isFapi2(client) ? { algorithms: fapi2Algorithms, requireNonce: settings.requireDpopNonce } : {};
}

/**
 * Whether a refresh uses up the refresh token and issues a new one. Not for
 * fapi2 clients (5.3.2.1-9): rotation buys nothing with a confidential client
 * and sender-constrained access tokens, and a client that lost the answer
 * would lose its grant. Every other client keeps rotation with replay
 * detection (RFC 9700 section 4.14).
 */
export function rotatesRefreshTokens(client: Pick<OidcClient, "profile">): boolean {
  return !isFapi2(client);
}

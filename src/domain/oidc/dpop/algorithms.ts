/**
 * The JWS algorithms a DPoP proof may be signed with (discovery's
 * `dpop_signing_alg_values_supported`): the asymmetric ones clients' platforms
 * offer (ECDSA P-256 on mobile key stores, RSA, Ed25519). Symmetric
 * algorithms and `none` cannot prove possession of a public key.
 */
export const dpopSigningAlgorithms = ["ES256", "PS256", "RS256", "EdDSA"] as const;

export type DpopSigningAlgorithm = (typeof dpopSigningAlgorithms)[number];

export function isDpopSigningAlgorithm(value: unknown): value is DpopSigningAlgorithm {
  return typeof value === "string" && (dpopSigningAlgorithms as readonly string[]).includes(value);
}

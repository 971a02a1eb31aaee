/** Members that only private or symmetric JWKs have (RFC 7517, RFC 7518 section 6). */
const privateJwkMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/** True when a JWK carries any private or symmetric key material: a public key must carry none. */
export function hasPrivateMembers(jwk: object): boolean {
  return privateJwkMembers.some((member) => Object.hasOwn(jwk, member));
}

import { isSignatureType } from "../../certificates/model.ts";
import type { AuthMethod } from "../acr.ts";
import type { JpkiLinkRow } from "./model.ts";

/**
 * Why the level a request needs is out of the user's reach, as far as their
 * linked certificates tell, so the page can say what happened and what to do:
 *
 * - `signature_revoked` / `authentication_revoked`: the certificate that would
 *   reach it was found revoked (a signature certificate is revoked when the
 *   holder's name or address changes; a new one is issued at the municipality);
 * - `expired`: it has expired;
 * - `no_certificate`: a certificate would reach it, but none is linked;
 * - `no_method`: no certificate would reach it (the level needs other methods).
 *
 * `method` is the certificate method that reaches the level (see
 * AuthorizationFlow.unreachableLevel); a signature certificate also does where
 * `jpki_auth` is asked for.
 */
export type OutOfReach = "signature_revoked" | "authentication_revoked" | "expired" | "no_certificate" | "no_method";

export function whyOutOfReach(links: readonly JpkiLinkRow[], method: AuthMethod | undefined, now: number): OutOfReach {
  if (method !== "jpki_sig" && method !== "jpki_auth") return "no_method";
  const relevant = links.filter((link) => method === "jpki_auth" || isSignatureType(link.type));
  const revoked = relevant.filter((link) => link.status === "revoked");
  if (revoked.length > 0) return revoked.some((link) => isSignatureType(link.type)) ? "signature_revoked" : "authentication_revoked";
  if (relevant.some((link) => link.notAfter <= now)) return "expired";
  return "no_certificate";
}

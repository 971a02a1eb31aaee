/**
 * Who the passkeys belong to (WebAuthn's relying party): its RP ID, the
 * domain an authenticator binds a credential to, and the origins whose
 * pages may use them. Both come from settings, never from a request's Host.
 */
export interface RelyingParty {
  id: string;
  /** Shown by some authenticators when a passkey is made. */
  name: string;
  origins: readonly string[];
}

/**
 * The relying party of an issuer when the settings name none: the issuer's
 * host as RP ID and its origin as the one allowed origin. An RP ID that is
 * not the origin's host or a registrable suffix of it is refused: browsers
 * would refuse every ceremony.
 */
export function relyingPartyOf(issuer: string, settings: { rpId?: string | undefined; origins?: readonly string[] | undefined }): RelyingParty {
  const issuerUrl = new URL(issuer);
  const id = settings.rpId ?? issuerUrl.hostname;
  const origins = settings.origins && settings.origins.length > 0 ? [...settings.origins] : [issuerUrl.origin];
  for (const origin of origins) {
    const host = new URL(origin).hostname;
    if (host !== id && !host.endsWith(`.${id}`)) {
      throw new RangeError(`WebAuthn origin ${origin} is not on the RP ID ${id} or a subdomain of it`);
    }
  }
  return { id, name: "shomei", origins };
}

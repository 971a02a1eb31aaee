import { compactJws } from "../keys/id-token.ts";
import type { SigningAlg, SigningKeys } from "../keys/signing-keys.ts";

/** The one event of a logout token (Back-Channel Logout 1.0 section 2.4). */
export const backchannelLogoutEvent = "http://schemas.openid.net/event/backchannel-logout";

/** A logout token is good for this long after it is signed: it is signed again at each attempt. */
export const logoutTokenLifetimeSeconds = 120;

/** The claims of a logout token (section 2.4); never a nonce (section 2.4: it would let it pass as an ID token). */
export interface LogoutTokenClaims {
  iss: string;
  aud: string;
  iat: number;
  exp: number;
  jti: string;
  sub: string;
  sid: string;
  events: { [backchannelLogoutEvent]: Record<string, never> };
}

/**
 * The claims for one ended session and one client. Both sub and sid are
 * always present: one token is sent per ended session, and a token without
 * sid would ask the client to end every session of the user (section 2.4),
 * which is not what happened. So a client that requires sid
 * (backchannel_logout_session_required) is always served.
 */
export function logoutTokenClaims(input: { issuer: string; clientId: string; userId: string; sid: string; jti: string; now: number }): LogoutTokenClaims {
  const iat = Math.floor(input.now / 1000);
  return {
    iss: input.issuer,
    aud: input.clientId,
    iat,
    exp: iat + logoutTokenLifetimeSeconds,
    jti: input.jti,
    sub: input.userId,
    sid: input.sid,
    events: { [backchannelLogoutEvent]: {} },
  };
}

/**
 * Signs a logout token with the key that signs the client's ID tokens (its
 * id_token_signed_response_alg), so the client verifies both against the
 * same JWKS; `typ` is `logout+jwt` (section 2.4), which keeps it from being
 * taken for an ID token or an access token.
 */
export async function signLogoutToken(keys: SigningKeys, alg: SigningAlg, claims: LogoutTokenClaims): Promise<string> {
  const key = await keys.active(alg);
  return compactJws({ alg: key.alg, kid: key.kid, typ: "logout+jwt" }, { ...claims }, key.privateKey);
}

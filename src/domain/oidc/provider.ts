import type { AcrPolicy } from "./acr.ts";
import type { ClientAuthenticator } from "./client-authentication.ts";
import type { DpopProofs } from "./dpop/dpop-proofs.ts";
import type { ResourceAccess } from "./dpop/resource-access.ts";
import type { TokenBinding } from "./dpop/token-binding.ts";
import type { AuthorizationFlow } from "./flow/authorization-flow.ts";
import type { ClientGrants } from "./grants/client-grants.ts";
import type { SigningKeys } from "./keys/signing-keys.ts";
import type { PushedRequests } from "./pushed-requests.ts";
import type { RequestObjects } from "./request-object.ts";
import type { SignIn } from "./sign-in.ts";
import type { ClientStore } from "./stores.ts";
import type { ClientRegistration } from "./registration/client-registration-service.ts";
import type { InitialAccessTokens } from "./registration/initial-access-tokens.ts";
import type { TokenAdministration } from "./tokens/token-administration.ts";
import type { TokenService } from "./tokens/token-service.ts";
import type { OidcUsers } from "./users.ts";
import type { JpkiSignIn } from "./jpki/jpki-sign-in.ts";
import type { JpkiSignRequests } from "./jpki/sign-requests.ts";
import type { SessionEndings } from "./backchannel-logout/session-endings.ts";
import type { EndSession } from "./end-session.ts";
import type { Passkeys } from "./passkeys/passkeys.ts";

/**
 * The OpenID Connect provider's services, as the transports see them; built
 * by the composition root (src/app/compose-oidc.ts).
 */
export interface Oidc {
  issuer: string;
  policy: AcrPolicy;
  /** Whether discovery advertises the authorization response's `iss` (which is sent either way). */
  advertiseAuthorizationResponseIss: boolean;
  clients: ClientStore;
  /** Settings of the fapi2 client profile (fapi2-profile.ts). */
  fapi2: { requireDpopNonce: boolean };
  clientAuthenticator: ClientAuthenticator;
  pushed: PushedRequests;
  /** Signed request objects (RFC 9101) at PAR and the authorization endpoint. */
  requestObjects: RequestObjects;
  users: OidcUsers;
  flow: AuthorizationFlow;
  /** Sign-in and step-up with a JPKI card; certificates linked to users. */
  jpki: JpkiSignIn;
  /** Passkeys (WebAuthn): adding them, and sign-in and step-up with them. */
  passkeys: Passkeys;
  /** Signing requests answered by a JPKI app on a phone (QR code or app link). */
  signRequests: JpkiSignRequests;
  /** Password and step-up checks, throttled. */
  signIn: SignIn;
  /** Server key: CSRF tokens, sealing TOTP secrets. */
  secretKey: Buffer;
  sessionLifetimeSeconds: number;
  /** Ends sessions and queues their clients' logout tokens (Back-Channel Logout). */
  sessionEndings: SessionEndings;
  /** The end-session endpoint's steps (RP-Initiated Logout): validation, confirmation, the session's end. */
  endSession: EndSession;
  tokens: TokenService;
  tokenAdministration: TokenAdministration;
  /** DPoP proofs at PAR, token, revocation and introspection (RFC 9449). */
  dpop: DpopProofs;
  /** The access token of a userinfo or grant management request, Bearer or DPoP. */
  resourceAccess: ResourceAccess;
  /** How every resource (userinfo, grant management, the RPCs) admits an access token's presentation. */
  tokenBinding: TokenBinding;
  signingKeys: SigningKeys;
  grants: ClientGrants;
  /** Dynamic client registration (RFC 7591, RFC 7592); off unless the settings turn it on. */
  registration: ClientRegistration;
  /** The initial access tokens registration by token accepts. */
  registrationTokens: InitialAccessTokens;
  /** Every authorization_details type some registered client may request (for discovery). */
  authorizationDetailsTypes(): Promise<string[]>;
  endpoints: OidcEndpoints;
}

export interface OidcEndpoints {
  authorization: string;
  par: string;
  token: string;
  userinfo: string;
  jwks: string;
  revocation: string;
  introspection: string;
  grants: string;
  /** RFC 7591; discovery names it only while registration is on. */
  registration: string;
}

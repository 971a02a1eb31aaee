import type { Config } from "../config/schema.ts";
import { JpkiSignRequests } from "../domain/oidc/jpki/sign-requests.ts";
import { JpkiSignRequestsRepository } from "../storage/jpki-sign-requests-repository.ts";
import { ClientsRepository } from "../storage/clients-repository.ts";
import type { Database } from "../storage/database.ts";
import { OidcRepository } from "../storage/oidc-repository.ts";
import { OneTimeRecords } from "../storage/one-time-records.ts";
import { SigningKeysRepository } from "../storage/signing-keys-repository.ts";
import { TokensRepository } from "../storage/tokens-repository.ts";
import type { Clock } from "../domain/clock.ts";
import { LoginThrottle } from "../domain/credentials/login-throttle.ts";
import { LoginAttemptsRepository } from "../storage/login-attempts-repository.ts";
import { defaultAcrPolicy, type AcrPolicy } from "../domain/oidc/acr.ts";
import { loadAcrPolicyFile } from "../adapters/files/acr-policy-file.ts";
import { ClientAuthenticator } from "../domain/oidc/client-authentication.ts";
import { ClientKeys } from "../domain/oidc/client-keys.ts";
import { createKeySetFetcher } from "../adapters/http/key-set-fetcher.ts";
import type { Oidc, OidcEndpoints } from "../domain/oidc/provider.ts";
import { AuthorizationFlow } from "../domain/oidc/flow/authorization-flow.ts";
import { SigningKeys } from "../domain/oidc/keys/signing-keys.ts";
import { TokenAdministration } from "../domain/oidc/tokens/token-administration.ts";
import { TokenService } from "../domain/oidc/tokens/token-service.ts";
import { PushedRequests } from "../domain/oidc/pushed-requests.ts";
import { RequestObjects } from "../domain/oidc/request-object.ts";
import { SignIn } from "../domain/oidc/sign-in.ts";
import { OidcUsers } from "../domain/oidc/users.ts";
import { ClientGrants } from "../domain/oidc/grants/client-grants.ts";
import { DpopProofs } from "../domain/oidc/dpop/dpop-proofs.ts";
import { DpopNonces } from "../domain/oidc/dpop/nonce.ts";
import { ResourceAccess } from "../domain/oidc/dpop/resource-access.ts";
import { TokenBinding } from "../domain/oidc/dpop/token-binding.ts";
import { DpopProofsRepository } from "../storage/dpop-proofs-repository.ts";
import { assertServerMeetsFapi2, requestUriLifetime } from "../domain/oidc/fapi2-profile.ts";
import type { JpkiSignIn } from "../domain/oidc/jpki/jpki-sign-in.ts";
import { ClientRegistration } from "../domain/oidc/registration/client-registration-service.ts";
import { InitialAccessTokens } from "../domain/oidc/registration/initial-access-tokens.ts";
import { ClientRegistrationsRepository, InitialAccessTokensRepository } from "../storage/client-registrations-repository.ts";
import { SessionEndings } from "../domain/oidc/backchannel-logout/session-endings.ts";
import { EndSession } from "../domain/oidc/end-session.ts";
import { LogoutOutboxRepository } from "../storage/logout-outbox-repository.ts";
import type { ApiAccessTokens } from "../domain/accounts/api-access-tokens.ts";
import { PasskeyChallenges } from "../domain/oidc/passkeys/challenges.ts";
import { Passkeys } from "../domain/oidc/passkeys/passkeys.ts";
import { relyingPartyOf } from "../domain/oidc/passkeys/relying-party.ts";
import { PasskeysRepository } from "../storage/passkeys-repository.ts";

/** What the provider takes from the certificate half: JPKI sign-in. */
export interface OidcCertificateServices {
  jpki: JpkiSignIn;
  /** The certificate API's access tokens: the client_credentials grant issues them, revocation and introspection cover them. */
  apiAccessTokens?: ApiAccessTokens;
}

/** Lifetimes of what the token endpoint issues. */
const tokenLifetimes = {
  accessTokenLifetimeSeconds: 3600,
  refreshTokenLifetimeSeconds: 30 * 24 * 3600,
  idTokenLifetimeSeconds: 3600,
};

/**
 * DPoP proofs (docs/oidc-decisions.md): iat at most 60 seconds old and 10
 * seconds ahead; server nonces, when required, change every 5 minutes.
 */
const dpopProofWindow = { maxAgeSeconds: 60, futureSkewSeconds: 10 };
/** How long a DPoP nonce is handed out; it is accepted for one slot more (DpopNonces). */
export const dpopNonceSlotMs = 5 * 60 * 1000;

/** How long a passkey ceremony's challenge lives: as long as the browser is told to wait (the options' timeout). */
const passkeyChallengeLifetimeMs = 5 * 60 * 1000;

/** Authorization codes: one minute, as FAPI 2.0 (5.3.2.1-11) asks of its clients and is plenty for every other. */
const codeLifetimeSeconds = 60;

/** How far ahead of the server's clock a client assertion's iat, nbf and exp checks tolerate (ClientAuthenticator's default). */
const clientAssertionClockToleranceSeconds = 30;

/**
 * A client's jwks_uri is read within a token or PAR request: a short deadline, and a bound on what is read
 * (a key set of a few keys is a few KiB). A kid not in the kept set fetches again at most this often.
 */
const keySetFetchLimits = { timeoutMs: 5000, maxBytes: 64 * 1024 };
const keySetRefetchCooldownMs = 30 * 1000;

/** The window of the public clients' PAR rate limit; the sweeper keeps the attempts table at least this long. */
export const publicParWindowMs = 60 * 1000;

function endpointsOf(issuer: string): OidcEndpoints {
  const api = `${issuer}/api/oidc/v1`;
  return {
    authorization: `${api}/authorize`,
    par: `${api}/par`,
    token: `${api}/token`,
    userinfo: `${api}/userinfo`,
    jwks: `${api}/jwks`,
    revocation: `${api}/revoke`,
    introspection: `${api}/introspect`,
    grants: `${api}/grants`,
    registration: `${api}/register`,
  };
}

/** The levels of SHOMEI_ACR_POLICY_FILE, or the default policy; throws a DomainError naming the file's problem. */
export function configuredAcrPolicy(config: Config): AcrPolicy {
  return config.acrPolicyFile ? loadAcrPolicyFile(config.acrPolicyFile) : defaultAcrPolicy;
}

/**
 * The OpenID Connect provider, wired to its repositories and to what it takes
 * from the certificate half. policy: the ACR policy, when the caller loaded it
 * already (see configuredAcrPolicy).
 */
export function createOidc(
  config: Config,
  database: Database,
  secretKey: Buffer,
  clock: Clock,
  certificates: OidcCertificateServices,
  policy: AcrPolicy = configuredAcrPolicy(config),
): Oidc {
  const issuer = config.baseUrl;
  const records = new OneTimeRecords(database);
  const repository = new OidcRepository(database);
  const clients = new ClientsRepository(database);
  const users = new OidcUsers(repository, secretKey, clock);
  // A family's revocation outlives every token issued before it (none is issued after).
  const longestTokenMs = Math.max(tokenLifetimes.accessTokenLifetimeSeconds, tokenLifetimes.refreshTokenLifetimeSeconds) * 1000;
  const tokensRepository = new TokensRepository(database, longestTokenMs);
  const passkeys = new Passkeys(
    new PasskeysRepository(database),
    new PasskeyChallenges(records, passkeyChallengeLifetimeMs, clock),
    relyingPartyOf(issuer, { rpId: config.webauthnRpId, origins: config.webauthnOrigins }),
    clock,
  );
  const signingKeys = new SigningKeys(new SigningKeysRepository(database), secretKey, clock);
  const tokenAdministration = new TokenAdministration(tokensRepository, issuer, clock, certificates.apiAccessTokens);
  const nonces = new DpopNonces(secretKey, dpopNonceSlotMs);
  const dpop = new DpopProofs(
    new DpopProofsRepository(database),
    { ...dpopProofWindow, nonces: config.dpopRequireNonce ? nonces : undefined, noncesOnRequest: nonces },
    clock,
  );
  // Every client may be registered with the fapi2 profile: the server must be able to hold its rules.
  assertServerMeetsFapi2({
    codeLifetimeSeconds,
    requestUriLifetimeSeconds: requestUriLifetime({ profile: "fapi2" }, config.parLifetimeSeconds),
    futureSkewSeconds: {
      clientAssertion: clientAssertionClockToleranceSeconds,
      dpopProof: dpopProofWindow.futureSkewSeconds,
      requestObject: clientAssertionClockToleranceSeconds,
    },
  });
  // Shares the sign-in throttle's table and mechanism, with counters of its own.
  const publicParLimit = new LoginThrottle(new LoginAttemptsRepository(database), secretKey, clock, {
    maxFailuresPerAccount: config.publicParMaxPerClient,
    maxFailuresPerAddress: config.publicParMaxPerAddress,
    windowMs: publicParWindowMs,
    purpose: "public-par",
  });
  const tokenBinding = new TokenBinding(dpop);
  const endpoints = endpointsOf(issuer);
  const registrationTokens = new InitialAccessTokens(new InitialAccessTokensRepository(database), clock, config.clientRegistrationTokenSha256);
  // Every registration counts, from its address and in all ("registrations"), in the public PAR limit's window.
  const registrationLimit = new LoginThrottle(new LoginAttemptsRepository(database), secretKey, clock, {
    maxFailuresPerAccount: config.clientRegistrationMaxPerMinute,
    maxFailuresPerAddress: config.clientRegistrationMaxPerAddress,
    windowMs: publicParWindowMs,
    purpose: "client-registration",
  });
  const clientKeys = new ClientKeys(createKeySetFetcher({ allowPrivate: config.webhookAllowPrivate, ...keySetFetchLimits }), clock, {
    cacheTtlMs: config.clientJwksCacheSeconds * 1000,
    refetchCooldownMs: keySetRefetchCooldownMs,
  });
  const requestObjects = new RequestObjects(issuer, clientKeys, clock, clientAssertionClockToleranceSeconds);
  const flow = new AuthorizationFlow(repository, users, clients, records, {
    issuer,
    policy,
    interactionLifetimeMs: 30 * 60 * 1000,
    sessionLifetimeMs: config.sessionLifetimeSeconds * 1000,
    codeLifetimeMs: codeLifetimeSeconds * 1000,
    secretKey,
    oneOffAuthorizationDetailsTypes: new Set(config.oneOffAuthorizationDetailsTypes),
  }, clock, async (userId) => [...(await certificates.jpki.methodsOf(userId)), ...(await passkeys.methodsOf(userId))]);
  const sessionEndings = new SessionEndings(new LogoutOutboxRepository(database), clock);
  return {
    issuer,
    policy,
    advertiseAuthorizationResponseIss: config.advertiseAuthorizationResponseIss,
    clients,
    fapi2: { requireDpopNonce: config.fapi2DpopRequireNonce },
    clientAuthenticator: new ClientAuthenticator(clients, records, clientKeys, clock, { clockToleranceSeconds: clientAssertionClockToleranceSeconds }),
    pushed: new PushedRequests(records, clock, config.parLifetimeSeconds, publicParLimit, requestObjects),
    requestObjects,
    users,
    flow,
    jpki: certificates.jpki,
    signRequests: new JpkiSignRequests(
      new JpkiSignRequestsRepository(database),
      certificates.jpki.challenges,
      secretKey,
      config.jpkiSignRequestLifetimeSeconds * 1000,
      clock,
    ),
    passkeys,
    signIn: new SignIn(
      users,
      new LoginThrottle(new LoginAttemptsRepository(database), secretKey, clock, {
        maxFailuresPerAccountAtAddress: config.loginMaxFailuresPerAccountAtAddress,
        maxFailuresPerAccount: config.loginMaxFailuresPerAccount,
        maxFailuresPerAddress: config.loginMaxFailuresPerAddress,
        windowMs: config.loginThrottleWindowSeconds * 1000,
      }),
    ),
    secretKey,
    sessionLifetimeSeconds: config.sessionLifetimeSeconds,
    sessionEndings,
    endSession: new EndSession({ issuer, keys: signingKeys, clients, secretKey, sessions: flow, users, sessionEndings }),
    tokens: new TokenService(records, tokensRepository, repository, signingKeys, { issuer, ...tokenLifetimes }, clock, (userId) =>
      certificates.jpki.isVerified(userId),
    certificates.apiAccessTokens),
    tokenAdministration,
    dpop,
    resourceAccess: new ResourceAccess(tokenAdministration, tokenBinding, clients, { requireDpopNonce: config.fapi2DpopRequireNonce }),
    tokenBinding,
    signingKeys,
    grants: new ClientGrants(repository, clock),
    registration: new ClientRegistration(clients, new ClientRegistrationsRepository(database), registrationTokens, registrationLimit, clock, {
      policy: config.clientRegistration,
      endpoint: endpoints.registration,
      allowPrivateUris: config.webhookAllowPrivate,
    }),
    registrationTokens,
    async authorizationDetailsTypes() {
      const types = new Set((await clients.list()).flatMap((c) => c.allowedAuthorizationDetailsTypes));
      return [...types].sort();
    },
    endpoints,
  };
}

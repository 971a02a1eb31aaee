import type { OneTimeStore } from "../../single-use.ts";
import type { Clock } from "../../clock.ts";
import { acrForMethods, methodsToReach, minimumRequestedAcr, reachableAcrs, reportedAcr, type AcrPolicy, type AuthMethod } from "../acr.ts";
import type { AuthorizationCodePayload } from "./authorization-code.ts";
import type { AuthorizationRequest, GrantManagementAction } from "../authorization-request.ts";
import type { OidcClient } from "../client.ts";
import { carriedMethods } from "../carried-methods.ts";
import { decideAuthorization, dependsOnReachableAcrs, type DecisionOutcome } from "../decision-flow.ts";
import { alreadyGranted, applyGrantAction, type GrantContent } from "../grants/index.ts";
import { OAuthError } from "../oauth-error.ts";
import type { GrantRow, OidcUserRow, SessionRow } from "../model.ts";
import type { ClientLookup, GrantStore, InteractionStore, SessionStore } from "../stores.ts";
import type { OidcUsers } from "../users.ts";
import { InteractionEnded } from "./interaction-ended.ts";
import type { InteractionState } from "./interaction-state.ts";
import { errorRedirect, redirectTo } from "./redirects.ts";
import { orderedSecret, randomToken, sessionSid, sha256Hex, storedKeyOf } from "./secrets.ts";

export interface FlowSettings {
  issuer: string;
  policy: AcrPolicy;
  interactionLifetimeMs: number;
  sessionLifetimeMs: number;
  codeLifetimeMs: number;
  /** The server key: derives each session's `sid`. */
  secretKey: Buffer;
  /** authorization_details types whose every request shows the consent page (see alreadyGranted). */
  oneOffAuthorizationDetailsTypes: ReadonlySet<string>;
}

/**
 * The flow's pages: `unreachable` says that no method the signed-in user has
 * reaches the level asked for (decision flow row 4), and why, before the
 * error goes back to the client.
 */
export type FlowPage = "login" | "reauth" | "consent" | "unreachable";

/** Where the browser goes next. */
export type Step = { kind: "redirect"; url: string } | { kind: "page"; page: FlowPage; interactionId: string };

export interface LoadedInteraction {
  id: string;
  state: InteractionState;
  client: OidcClient;
  user: OidcUserRow | undefined;
}

/** An interaction that cannot continue here: the browser is sent back to the application to start again. */
function interactionNotFound(why: string): OAuthError {
  return new OAuthError("invalid_request", `${why}. Return to the application and start again.`);
}

/**
 * The authorization flow after the request is validated: the decision flow
 * (spec 3.1) answers at once with a code or an error, or asks for a page; an
 * interaction is stored for a request that needs pages, moved on by the
 * decision flow after every page, and ends in a redirect to the client.
 */
export class AuthorizationFlow {
  constructor(
    private readonly repository: SessionStore & InteractionStore & GrantStore,
    private readonly users: OidcUsers,
    private readonly clients: ClientLookup,
    private readonly codes: OneTimeStore,
    private readonly settings: FlowSettings,
    private readonly clock: Clock,
    /** The methods the user's linked certificates (JPKI sign-in) and passkeys can perform; none without it. */
    private readonly otherMethods: (userId: string) => Promise<AuthMethod[]> = async () => [],
  ) {}

  /**
   * Takes the first step of a validated request. An interaction is stored
   * only when a page is needed: a request that can be answered at once (a
   * signed-in user who granted before, or an error) is answered without one,
   * as nothing can come back to it.
   */
  async start(client: OidcClient, request: AuthorizationRequest, browserId: string, sessionId: string | undefined): Promise<Step> {
    const state: InteractionState = { clientId: client.clientId, request, authenticated: false };
    const decided = await this.decide(state, client, sessionId);
    switch (decided.kind) {
      case "error":
        return errorStep(request, this.settings.issuer, decided.error, decided.description);
      case "issue_code":
        return this.issueCode(client, request, decided.session, decided.user, decided.grant);
      case "page": {
        const id = randomToken();
        const now = this.clock();
        await this.repository.insertInteraction({
          idHash: sha256Hex(id),
          browserHash: sha256Hex(browserId),
          state,
          createdAt: now,
          expiresAt: now + this.settings.interactionLifetimeMs,
        });
        return { kind: "page", page: decided.page, interactionId: id };
      }
    }
  }

  /** Loads an interaction for a page; only in the browser that started it. */
  async load(id: string, browserId: string | undefined): Promise<LoadedInteraction> {
    const row = id ? await this.repository.findInteraction(sha256Hex(id), this.clock()) : undefined;
    if (!row || !browserId || row.browserHash !== sha256Hex(browserId)) {
      throw (await this.ended(id, browserId)) ?? interactionNotFound("this sign-in request has expired or belongs to another browser");
    }
    const state = row.state as InteractionState;
    const client = await this.clients.find(state.clientId);
    if (!client) throw interactionNotFound("the application of this sign-in request is no longer registered");
    const user = state.userId ? await this.users.find(state.userId) : undefined;
    return { id, state, client, user };
  }

  /** Applies the decision flow to the interaction as it stands. */
  async advance(id: string, browserId: string, sessionId: string | undefined): Promise<Step> {
    const { state, client } = await this.load(id, browserId);
    const userBefore = state.userId;
    const decided = await this.decide(state, client, sessionId);
    switch (decided.kind) {
      case "error":
        return this.fail(id, state.request, decided.error, decided.description);
      case "issue_code":
        // Ending the interaction is the single-use gate: a double submit issues one code.
        if (!(await this.repository.endInteraction(sha256Hex(id), endedHash(id)))) {
          throw (await this.ended(id, browserId)) ?? interactionNotFound("this sign-in request was already completed");
        }
        return this.issueCode(client, state.request, decided.session, decided.user, decided.grant);
      case "page":
        if (state.userId !== userBefore) await this.save(id, state);
        return { kind: "page", page: decided.page, interactionId: id };
    }
  }

  /**
   * The decision flow (spec 3.1) for an interaction's state and the browser's
   * session. A session of another user than the one the interaction
   * authenticated does not count; the session's user becomes the
   * interaction's (in `state`, which the caller stores when it keeps it).
   */
  private async decide(state: InteractionState, client: OidcClient, sessionId: string | undefined): Promise<Decided> {
    const request = state.request;
    const signedIn = sessionId ? await this.repository.findSignedIn(sha256Hex(sessionId), this.clock(), client.clientId) : undefined;
    const usable = signedIn && (!state.userId || signedIn.session.userId === state.userId) ? signedIn.session : undefined;
    const user = usable ? signedIn?.user : undefined;
    if (usable && user) state.userId = user.id;

    // Without a grant_id, the grant to compare with is the user's current one, read with the session.
    const grant = user ? (request.grantId === undefined ? signedIn?.currentGrant : await this.grantFor(request, user.id, client.clientId)) : undefined;
    if (grant instanceof OAuthError) return { kind: "error", error: grant.error, description: grant.description };

    const now = this.clock();
    const decideWith = (enrolled: readonly AuthMethod[]): DecisionOutcome =>
      decideAuthorization({
        prompt: new Set(request.prompt),
        maxAge: request.maxAge,
        acrValues: request.acrValues,
        session: usable && user ? { authTime: usable.authTime, acr: usable.acr, amr: usable.amr } : undefined,
        reachableAcrs: reachableAcrs(this.settings.policy, enrolled),
        alreadyGranted: alreadyGranted(request.grantManagementAction, grant, request, this.settings.oneOffAuthorizationDetailsTypes),
        consent: state.consent,
        reauthenticatedInThisInteraction: state.authenticated,
        now,
        policy: this.settings.policy,
      });
    // The user's linked certificates are read only when the outcome depends on what the user can reach.
    let outcome = decideWith(user ? this.users.enrolledMethods(user) : []);
    if (user && dependsOnReachableAcrs(outcome)) outcome = decideWith(await this.enrolled(user));
    switch (outcome.kind) {
      case "error":
        // Right after a good password a person must not be bounced with a bare error: a page says why first.
        if (outcome.row === 4 && outcome.cause === "no_method" && user) return { kind: "page", page: "unreachable" };
        return { kind: "error", error: outcome.error, description: outcome.description };
      case "login":
      case "reauth":
      case "consent":
        return { kind: "page", page: outcome.kind };
      case "issue_code":
        return { kind: "issue_code", session: usable!, user: user!, grant };
    }
  }

  /** A successful login (by password unless `amr` says otherwise): a new session (returned, for the cookie) and the next step. */
  async login(interaction: LoadedInteraction, user: OidcUserRow, browserId: string, amr: string[] = ["pwd"]): Promise<{ sessionId: string; step: Step }> {
    const sessionId = await this.startSession(user, amr);
    const state: InteractionState = { ...interaction.state, userId: user.id, authenticated: true };
    await this.save(interaction.id, state);
    return { sessionId, step: await this.advance(interaction.id, browserId, sessionId) };
  }

  /**
   * A new session for the user, signed in with `amr`; its id, for the cookie.
   * Used by login, and alone by the account pages' sign-in (no application).
   */
  async startSession(user: OidcUserRow, amr: string[] = ["pwd"]): Promise<string> {
    const now = this.clock();
    const sessionId = randomToken();
    await this.repository.insertSession({
      idHash: sha256Hex(sessionId),
      userId: user.id,
      authTime: now,
      acr: acrForMethods(this.settings.policy, amr) ?? this.settings.policy.levels[0]!,
      amr,
      createdAt: now,
      expiresAt: now + this.settings.sessionLifetimeMs,
    });
    return sessionId;
  }

  /**
   * A successful re-authentication with the given methods (`amr`: the
   * methods and what else describes them, such as `hwk` and `sc` of a JPKI
   * card): the session's auth_time, acr and amr are renewed, with the
   * holder's consent to the signature certificate's 基本4情報 when given.
   */
  async reauthenticated(interaction: LoadedInteraction, sessionId: string, methods: string[], browserId: string, basicInfoConsentAt?: number): Promise<Step> {
    const acr = acrForMethods(this.settings.policy, methods) ?? this.settings.policy.levels[0]!;
    await this.repository.updateSessionAuthentication(sha256Hex(sessionId), { authTime: this.clock(), acr, amr: methods, basicInfoConsentAt });
    await this.save(interaction.id, { ...interaction.state, authenticated: true });
    return this.advance(interaction.id, browserId, sessionId);
  }

  async consent(interaction: LoadedInteraction, decision: "allow" | "deny", browserId: string, sessionId: string | undefined): Promise<Step> {
    await this.save(interaction.id, { ...interaction.state, consent: decision });
    return this.advance(interaction.id, browserId, sessionId);
  }

  /**
   * The user leaves the page that says the level is out of reach, back to the
   * application: the client gets the decision flow's row 4 error. Decided
   * again first: when the level has come within reach meanwhile (a new
   * certificate linked), the flow goes on to that page instead.
   */
  async returnUnreachable(id: string, browserId: string, sessionId: string | undefined): Promise<Step> {
    const step = await this.advance(id, browserId, sessionId);
    if (step.kind !== "page" || step.page !== "unreachable") return step;
    return this.fail(
      id,
      (await this.load(id, browserId)).state.request,
      "unmet_authentication_requirements",
      "no authentication method available to the user can satisfy the requested acr_values; the user returned to the application",
    );
  }

  /**
   * What the unreachable page says: the level the request needs, and which
   * JPKI certificate (if any) would reach it, so the page can say what to
   * link. `jpki_sig` first: it also does where `jpki_auth` is asked for.
   */
  unreachableLevel(interaction: LoadedInteraction): { acr: string; certificateMethod: "jpki_sig" | "jpki_auth" | undefined } {
    const policy = this.settings.policy;
    const acr = minimumRequestedAcr(policy, interaction.state.request.acrValues) ?? policy.levels[0]!;
    const reaches = (method: AuthMethod) => methodsToReach(policy, acr, [...this.users.enrolledMethods(interaction.user!), method]) !== undefined;
    const certificateMethod = reaches("jpki_sig") ? "jpki_sig" : reaches("jpki_auth") ? "jpki_auth" : undefined;
    return { acr, certificateMethod };
  }

  /** Remembers the language the user switched to, for the remaining pages of this interaction. */
  async chooseLocale(interaction: LoadedInteraction, locale: string): Promise<void> {
    interaction.state.locale = locale;
    await this.save(interaction.id, interaction.state);
  }

  /** What the re-authentication page must ask for, or undefined when nothing the user has is enough. */
  async reauthRequirement(interaction: LoadedInteraction, sessionId: string | undefined) {
    const session = await this.session(sessionId);
    const user = interaction.user;
    if (!session || !user || session.userId !== user.id) return undefined;
    const enrolled = await this.enrolled(user);
    const outcome = decideAuthorization({
      prompt: new Set(interaction.state.request.prompt),
      maxAge: interaction.state.request.maxAge,
      acrValues: interaction.state.request.acrValues,
      session: { authTime: session.authTime, acr: session.acr, amr: session.amr },
      reachableAcrs: reachableAcrs(this.settings.policy, enrolled),
      alreadyGranted: true,
      consent: undefined,
      reauthenticatedInThisInteraction: interaction.state.authenticated,
      now: this.clock(),
      policy: this.settings.policy,
    });
    if (outcome.kind !== "reauth") return undefined;
    // A passkey is offered beside the other ways when it reaches the level alone; the form asks for the others.
    const passkey = enrolled.includes("passkey") && methodsToReach(this.settings.policy, outcome.requiredAcr, ["passkey"]) !== undefined;
    const methods = methodsToReach(this.settings.policy, outcome.requiredAcr, enrolled.filter((m) => m !== "passkey"));
    if (!methods) return passkey ? { acr: outcome.requiredAcr, methods: [], carried: [], reasons: outcome.reasons, authTime: session.authTime, passkey } : undefined;
    const carriable = carriedMethods({
      reasons: outcome.reasons,
      session: { amr: session.amr, authTime: session.authTime },
      passwordVerifiedAt: interaction.state.passwordVerifiedAt,
      now: this.clock(),
    });
    // What is carried counts without being asked; something must still be asked, or it is no step-up.
    const carried = methods.filter((m) => carriable.includes(m));
    const asked = methods.filter((m) => !carriable.includes(m));
    return asked.length === 0
      ? { acr: outcome.requiredAcr, methods, carried: [], reasons: outcome.reasons, authTime: session.authTime, passkey }
      : { acr: outcome.requiredAcr, methods: asked, carried, reasons: outcome.reasons, authTime: session.authTime, passkey };
  }

  /** A step-up found the password right and another method wrong: the password is not asked again (see carriedMethods). */
  async passwordVerified(interaction: LoadedInteraction): Promise<void> {
    interaction.state.passwordVerifiedAt = this.clock();
    await this.save(interaction.id, interaction.state);
  }

  /**
   * The user cancelled on one of the interaction's pages: the application
   * gets access_denied at its (already matched) redirect_uri, as for Deny.
   */
  async cancel(interaction: LoadedInteraction): Promise<Step> {
    return this.fail(interaction.id, interaction.state.request, "access_denied", "the user cancelled the request");
  }

  /**
   * What approving the consent page will do to the user's grants, for the
   * page to say: `replace` or `merge` without a grant_id and with no grant yet
   * is `create`. An unusable grant_id never reaches the page (the flow fails first).
   */
  async consentAction(interaction: LoadedInteraction): Promise<GrantManagementAction | undefined> {
    const request = interaction.state.request;
    if (!interaction.user || request.grantManagementAction === undefined) return request.grantManagementAction;
    const grant = await this.grantFor(request, interaction.user.id, interaction.client.clientId);
    return effectiveAction(request, grant instanceof OAuthError ? undefined : grant);
  }

  /**
   * The session's user confirmed it is them outside any authorization
   * request (the account pages): auth_time, acr and amr are renewed as after
   * a step-up.
   */
  async renewSession(sessionId: string, methods: string[]): Promise<void> {
    const acr = acrForMethods(this.settings.policy, methods) ?? this.settings.policy.levels[0]!;
    await this.repository.updateSessionAuthentication(sha256Hex(sessionId), { authTime: this.clock(), acr, amr: methods, basicInfoConsentAt: undefined });
  }

  /** The methods the user can perform: secrets they hold, certificates linked to them, passkeys. */
  async enrolled(user: OidcUserRow): Promise<AuthMethod[]> {
    return [...this.users.enrolledMethods(user), ...(await this.otherMethods(user.id))];
  }

  async session(sessionId: string | undefined): Promise<SessionRow | undefined> {
    return sessionId ? this.repository.findSession(sha256Hex(sessionId), this.clock()) : undefined;
  }

  /**
   * The grant this request is compared with and acts on: the one named by
   * grant_id, else the user's current (latest) grant for the client; `replace`
   * and `merge` without a grant_id mean that current grant.
   */
  private async grantFor(request: AuthorizationRequest, userId: string, clientId: string) {
    if (request.grantId !== undefined) {
      const grant = await this.repository.findGrant(request.grantId);
      if (!grant || grant.userId !== userId || grant.clientId !== clientId) {
        return new OAuthError("invalid_grant_id", "grant_id does not name a grant of this user and client");
      }
      return grant;
    }
    return this.repository.findLatestGrant(userId, clientId);
  }

  /** The grant as the request's action leaves it, and a code for it. */
  private async issueCode(client: OidcClient, request: AuthorizationRequest, session: SessionRow, user: OidcUserRow, existing: GrantRow | undefined): Promise<Step> {
    const now = this.clock();
    const requested = { scopes: request.scopes, authorizationDetails: request.authorizationDetails };
    const action = effectiveAction(request, existing);
    const base = action === "create" ? undefined : existing;
    const content = applyGrantAction(base ? { scopes: base.scopes, authorizationDetails: base.authorizationDetails } : undefined, action, requested);
    const grantId = base?.id ?? randomToken();
    // The current grant, unchanged, stays current without a write: bumping updated_at would only keep it the latest.
    const unchangedCurrent = base !== undefined && request.grantId === undefined && sameContent(base, content);
    if (!unchangedCurrent) {
      await this.repository.saveGrant({
        id: grantId,
        userId: user.id,
        clientId: request.clientId,
        scopes: content.scopes,
        authorizationDetails: content.authorizationDetails,
        createdAt: base?.createdAt ?? now,
        updatedAt: now,
        revokedAt: null,
      });
    }
    const sid = sessionSid(this.settings.secretKey, session.idHash);
    // Only a client that listens is remembered: the others' codes cost no write (Back-Channel Logout, SessionEndings).
    if (client.backchannelLogoutUri) {
      await this.repository.recordSessionClient({ sessionIdHash: session.idHash, clientId: client.clientId, sid, userId: user.id, createdAt: now });
    }
    const code = orderedSecret(now);
    const payload: AuthorizationCodePayload = {
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge ?? null,
      nonce: request.nonce ?? null,
      scopes: request.scopes,
      authorizationDetails: request.authorizationDetails,
      grantId,
      userId: user.id,
      authTime: session.authTime,
      // In the client's words: the requested name or alias the session satisfies (see reportedAcr).
      acr: reportedAcr(this.settings.policy, session.acr, request.acrValues),
      amr: session.amr,
      sid,
      ...(request.claimsLocales ? { claimsLocales: request.claimsLocales } : {}),
      ...(request.dpopJkt !== undefined ? { dpopJkt: request.dpopJkt } : {}),
    };
    await this.codes.issue({
      kind: "authorization_code",
      keyHash: storedKeyOf(code),
      owner: request.clientId,
      payload,
      now,
      ttlMs: this.settings.codeLifetimeMs,
    });
    return { kind: "redirect", url: redirectTo(request.redirectUri, { code, state: request.state, iss: this.settings.issuer }) };
  }

  /**
   * An interaction of this browser that has ended (completed, or expired and
   * not yet swept), as the page that offers to start again; undefined for
   * anything else, which stays the plain error (another browser learns nothing).
   */
  private async ended(id: string, browserId: string | undefined): Promise<InteractionEnded | undefined> {
    if (!id || !browserId) return undefined;
    const completed = await this.repository.findInteraction(endedHash(id), 0);
    const row = completed ?? (await this.repository.findInteraction(sha256Hex(id), 0));
    if (!row || row.browserHash !== sha256Hex(browserId)) return undefined;
    const state = row.state as InteractionState;
    const client = await this.clients.find(state.clientId);
    if (!client) return undefined;
    const request = state.request;
    const returnTo = errorRedirect(request.redirectUri, this.settings.issuer, "access_denied", "the sign-in request had ended; the user returned to start again", request.state);
    return new InteractionEnded(completed ? "completed" : "expired", client.name, returnTo, { chosen: state.locale, uiLocales: request.uiLocales });
  }

  private async fail(id: string, request: AuthorizationRequest, error: string, description: string): Promise<Step> {
    await this.repository.endInteraction(sha256Hex(id), endedHash(id));
    return errorStep(request, this.settings.issuer, error, description);
  }

  private save(id: string, state: InteractionState): Promise<void> {
    return this.repository.updateInteraction(sha256Hex(id), state);
  }
}

/** Where an ended interaction is kept until swept: out of reach of its id, found only to say it has ended. */
function endedHash(id: string): string {
  return sha256Hex(`ended:${id}`);
}

/** What the decision flow says to do next (see AuthorizationFlow.decide). */
type Decided =
  | { kind: "error"; error: string; description: string }
  | { kind: "page"; page: FlowPage }
  | { kind: "issue_code"; session: SessionRow; user: OidcUserRow; grant: GrantRow | undefined };

/** The error sent back to the client's (already matched) redirect_uri. */
function errorStep(request: AuthorizationRequest, issuer: string, error: string, description: string): Step {
  return { kind: "redirect", url: errorRedirect(request.redirectUri, issuer, error, description, request.state) };
}

/** Exactly the same scopes and authorization details, in the same order: saving one as the other would change no value. */
function sameContent(a: GrantContent, b: GrantContent): boolean {
  return JSON.stringify(a.scopes) === JSON.stringify(b.scopes) && JSON.stringify(a.authorizationDetails) === JSON.stringify(b.authorizationDetails);
}

/**
 * `replace` or `merge` without a grant_id and with no current grant for this
 * user and client has nothing to act on: it makes the grant, like `create`.
 */
function effectiveAction(request: AuthorizationRequest, current: GrantRow | undefined): GrantManagementAction | undefined {
  const action = request.grantManagementAction;
  if ((action === "replace" || action === "merge") && request.grantId === undefined && current === undefined) return "create";
  return action;
}

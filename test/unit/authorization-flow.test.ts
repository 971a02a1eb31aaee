import { describe, expect, it } from "vitest";
import type { AuthorizationCodePayload } from "../../src/domain/oidc/flow/authorization-code.ts";
import type { Step } from "../../src/domain/oidc/flow/authorization-flow.ts";
import { InteractionEnded } from "../../src/domain/oidc/flow/interaction-ended.ts";
import { sha256Hex, storedKeyOf } from "../../src/domain/oidc/flow/secrets.ts";
import { OAuthError } from "../../src/domain/oidc/oauth-error.ts";
import { client, codeOf, issuer, lifetimes, OidcDomain, redirectParams } from "../support/oidc-domain.ts";

/**
 * The authorization flow (spec 3.1 through its pages) over in-memory ports:
 * what the first step of a request is, how pages move it on, and that an
 * interaction ends once. The decision table itself is test/unit/decision-flow.test.ts;
 * the same rules through real requests are test/service/oidc-authorize-*.test.ts.
 */

const second = 1000;

/** The page a Step shows, which must be one. */
function pageOf(step: Step): string {
  if (step.kind !== "page") throw new Error(`expected a page, got a redirect to ${step.url}`);
  return step.page;
}

function interactionIdOf(step: Step): string {
  if (step.kind !== "page") throw new Error(`expected a page, got a redirect to ${step.url}`);
  return step.interactionId;
}

/** The error a redirect Step sends back to the client, with its state and iss. */
function errorOf(step: Step): { error: string | null; state: string | null; iss: string | null; code: string | null } {
  const params = redirectParams(step);
  return { error: params.get("error"), state: params.get("state"), iss: params.get("iss"), code: params.get("code") };
}

async function payloadOf(domain: OidcDomain, code: string): Promise<AuthorizationCodePayload> {
  const record = await domain.stores.oneTime.find("authorization_code", storedKeyOf(code));
  if (!record) throw new Error("no authorization code stored under the code's key");
  return record.payload as AuthorizationCodePayload;
}

function codesStored(domain: OidcDomain): number {
  return [...domain.stores.tables.oneTimeRecords.values()].filter((r) => r.kind === "authorization_code").length;
}

/** A domain with the client registered, a user, and the user's grant of openid (a first code made it). */
async function signedInWithGrant(options: { totp?: boolean } = {}) {
  const domain = new OidcDomain();
  const rp = await domain.register();
  const user = await domain.user(options);
  const { sessionId } = await domain.code(rp, user);
  return { domain, rp, user, sessionId };
}

describe("the first step of a request", () => {
  it("without a session: the login page, and one interaction stored, known only by its hash", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const step = await domain.start(rp);
    expect(pageOf(step)).toBe("login");
    const id = interactionIdOf(step);
    expect([...domain.stores.tables.interactions.keys()]).toEqual([sha256Hex(id)]);
  });

  it("without a session and prompt=none: login_required at the redirect_uri with state and iss, and nothing stored", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const step = await domain.start(rp, { prompt: "none" });
    expect(errorOf(step)).toEqual({ error: "login_required", state: "st-1", iss: issuer, code: null });
    expect(domain.stores.tables.interactions.size).toBe(0);
    expect(codesStored(domain)).toBe(0);
  });

  it("with a session and a grant that covers the request: a code at once, without an interaction", async () => {
    const { domain, rp, sessionId } = await signedInWithGrant();
    const interactionsBefore = domain.stores.tables.interactions.size;
    const step = await domain.start(rp, { nonce: "n-1" }, sessionId);
    const params = redirectParams(step);
    expect(params.get("state")).toBe("st-1");
    expect(params.get("iss")).toBe(issuer);
    expect(params.get("code")).toBeTruthy();
    expect(domain.stores.tables.interactions.size).toBe(interactionsBefore);
  });

  it("with a session and no grant: the consent page", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const sessionId = await domain.flow.startSession(await domain.user());
    expect(pageOf(await domain.start(rp, {}, sessionId))).toBe("consent");
  });

  it("with a session, prompt=none and consent needed: consent_required", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const sessionId = await domain.flow.startSession(await domain.user());
    expect(errorOf(await domain.start(rp, { prompt: "none" }, sessionId)).error).toBe("consent_required");
  });

  it("the code stands for the request, the session's authentication and the grant; only its key is stored", async () => {
    const { domain, rp, user, sessionId } = await signedInWithGrant();
    const session = (await domain.flow.session(sessionId))!;
    const code = codeOf(await domain.start(rp, { nonce: "n-1", claims_locales: "ja" }, sessionId));
    const payload = await payloadOf(domain, code);
    const grant = await domain.stores.oidc.findLatestGrant(user.id, rp.clientId);
    expect(payload).toMatchObject({
      clientId: rp.clientId,
      redirectUri: rp.redirectUris[0],
      codeChallenge: null,
      nonce: "n-1",
      scopes: ["openid"],
      grantId: grant!.id,
      userId: user.id,
      authTime: session.authTime,
      acr: "low",
      amr: ["pwd"],
      claimsLocales: ["ja"],
    });
    expect([...domain.stores.tables.oneTimeRecords.values()].some((r) => r.keyHash === code)).toBe(false);
    // sid: the same for every code of the session, another for another session, neither the cookie nor its hash.
    expect(payload.sid).toBe((await payloadOf(domain, codeOf(await domain.start(rp, {}, sessionId)))).sid);
    const otherSession = await domain.flow.startSession(user);
    expect((await payloadOf(domain, codeOf(await domain.start(rp, {}, otherSession)))).sid).not.toBe(payload.sid);
    expect([sessionId, sha256Hex(sessionId)]).not.toContain(payload.sid);
  });
});

describe("prompt, max_age and acr_values with a session", () => {
  it("prompt=login: the re-authentication page; re-authenticating issues a code with the new auth_time", async () => {
    const { domain, rp, sessionId } = await signedInWithGrant();
    domain.time.advance(90 * second);
    const step = await domain.start(rp, { prompt: "login" }, sessionId);
    expect(pageOf(step)).toBe("reauth");
    const interaction = await domain.flow.load(interactionIdOf(step), "browser-1");
    const code = codeOf(await domain.flow.reauthenticated(interaction, sessionId, ["pwd"], "browser-1"));
    expect((await payloadOf(domain, code)).authTime).toBe(domain.time.now);
  });

  it("prompt=consent: the consent page even though the grant covers the request; allowing issues a code", async () => {
    const { domain, rp, sessionId } = await signedInWithGrant();
    const step = await domain.start(rp, { prompt: "consent" }, sessionId);
    expect(pageOf(step)).toBe("consent");
    const interaction = await domain.flow.load(interactionIdOf(step), "browser-1");
    codeOf(await domain.flow.consent(interaction, "allow", "browser-1", sessionId));
  });

  it("max_age: a session older than max_age goes to re-authentication; exactly max_age old is still fresh", async () => {
    const { domain, rp, sessionId } = await signedInWithGrant();
    domain.time.advance(120 * second);
    expect(pageOf(await domain.start(rp, { max_age: "119" }, sessionId))).toBe("reauth");
    codeOf(await domain.start(rp, { max_age: "120" }, sessionId));
  });

  it("max_age=0 always asks for an active authentication; with prompt=none that is interaction_required", async () => {
    const { domain, rp, sessionId } = await signedInWithGrant();
    expect(pageOf(await domain.start(rp, { max_age: "0" }, sessionId))).toBe("reauth");
    expect(errorOf(await domain.start(rp, { max_age: "0", prompt: "none" }, sessionId)).error).toBe("interaction_required");
  });

  it("acr step-up: acr_values=high over a password session asks for the one-time code only; the code then says high, pwd and otp", async () => {
    const { domain, rp, sessionId } = await signedInWithGrant({ totp: true });
    const step = await domain.start(rp, { acr_values: "high" }, sessionId);
    expect(pageOf(step)).toBe("reauth");
    const interaction = await domain.flow.load(interactionIdOf(step), "browser-1");
    expect(await domain.flow.reauthRequirement(interaction, sessionId)).toMatchObject({ acr: "high", methods: ["otp"], carried: ["pwd"], reasons: ["acr"] });
    const code = codeOf(await domain.flow.reauthenticated(interaction, sessionId, ["pwd", "otp"], "browser-1"));
    expect(await payloadOf(domain, code)).toMatchObject({ acr: "high", amr: ["pwd", "otp"], authTime: domain.time.now });
    // The session now holds the level: the next request for it needs no step-up.
    codeOf(await domain.start(rp, { acr_values: "high" }, sessionId));
  });

  it("acr_values out of the user's reach: a page says why, then unmet_authentication_requirements goes back to the client", async () => {
    const { domain, rp, sessionId } = await signedInWithGrant();
    const step = await domain.start(rp, { acr_values: "high" }, sessionId);
    expect(pageOf(step)).toBe("unreachable");
    const back = await domain.flow.returnUnreachable(interactionIdOf(step), "browser-1", sessionId);
    expect(errorOf(back)).toMatchObject({ error: "unmet_authentication_requirements", state: "st-1" });
  });

  it("a linked certificate that reaches the level turns the unreachable page into a step-up", async () => {
    const { domain, rp, user, sessionId } = await signedInWithGrant();
    domain.certificateMethods.set(user.id, ["jpki_auth"]);
    expect(pageOf(await domain.start(rp, { acr_values: "high" }, sessionId))).toBe("reauth");
  });
});

describe("consent", () => {
  it("is remembered by the grant: the same request, or fewer scopes, needs no page; more scopes show it again", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const user = await domain.user();
    const { sessionId } = await domain.code(rp, user, { scope: "openid profile" });
    expect((await domain.stores.oidc.findLatestGrant(user.id, rp.clientId))?.scopes).toEqual(["openid", "profile"]);
    codeOf(await domain.start(rp, { scope: "openid profile" }, sessionId));
    codeOf(await domain.start(rp, { scope: "openid" }, sessionId));
    expect(pageOf(await domain.start(rp, { scope: "openid email" }, sessionId))).toBe("consent");
  });

  it("denied: access_denied at the redirect_uri, and nothing granted", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const user = await domain.user();
    const sessionId = await domain.flow.startSession(user);
    const interaction = await domain.flow.load(interactionIdOf(await domain.start(rp, {}, sessionId)), "browser-1");
    const step = await domain.flow.consent(interaction, "deny", "browser-1", sessionId);
    expect(errorOf(step)).toMatchObject({ error: "access_denied", state: "st-1", code: null });
    expect(domain.stores.tables.grants.size).toBe(0);
    expect(codesStored(domain)).toBe(0);
  });

  it("a grant_id of another user's grant: invalid_grant_id, even for a signed-in user", async () => {
    const { domain, rp, user } = await signedInWithGrant();
    const grantId = (await domain.stores.oidc.findLatestGrant(user.id, rp.clientId))!.id;
    const other = await domain.flow.startSession(await domain.user());
    const step = await domain.start(rp, { grant_management_action: "replace", grant_id: grantId }, other);
    expect(errorOf(step).error).toBe("invalid_grant_id");
  });
});

describe("an interaction", () => {
  it("logging in on its page starts a session and moves it on to consent, then to a code", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const user = await domain.user();
    const interaction = await domain.flow.load(interactionIdOf(await domain.start(rp)), "browser-1");
    const { sessionId, step } = await domain.flow.login(interaction, user, "browser-1");
    expect((await domain.flow.session(sessionId))?.userId).toBe(user.id);
    expect(pageOf(step)).toBe("consent");
    const code = codeOf(await domain.flow.consent(await domain.flow.load(interaction.id, "browser-1"), "allow", "browser-1", sessionId));
    expect((await payloadOf(domain, code)).userId).toBe(user.id);
  });

  it("continues only in the browser that started it", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const id = interactionIdOf(await domain.start(rp));
    await expect(domain.flow.load(id, "browser-2")).rejects.toMatchObject({ error: "invalid_request" });
    await expect(domain.flow.load(id, undefined)).rejects.toBeInstanceOf(OAuthError);
  });

  it("is single use: two allows at once issue one code; the loser is told it had completed", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const sessionId = await domain.flow.startSession(await domain.user());
    const interaction = await domain.flow.load(interactionIdOf(await domain.start(rp, {}, sessionId)), "browser-1");
    const results = await Promise.allSettled([
      domain.flow.consent(interaction, "allow", "browser-1", sessionId),
      domain.flow.consent(interaction, "allow", "browser-1", sessionId),
    ]);
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBeInstanceOf(InteractionEnded);
    expect(codesStored(domain)).toBe(1);
  });

  it("once completed, its pages say so in its browser, with a way back carrying access_denied; another browser learns nothing", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const sessionId = await domain.flow.startSession(await domain.user());
    const id = interactionIdOf(await domain.start(rp, {}, sessionId));
    codeOf(await domain.flow.consent(await domain.flow.load(id, "browser-1"), "allow", "browser-1", sessionId));

    const ended = await domain.flow.load(id, "browser-1").catch((e: unknown) => e);
    expect(ended).toBeInstanceOf(InteractionEnded);
    expect((ended as InteractionEnded).why).toBe("completed");
    const back = new URL((ended as InteractionEnded).returnTo);
    expect([back.searchParams.get("error"), back.searchParams.get("state"), back.searchParams.get("iss")]).toEqual(["access_denied", "st-1", issuer]);
    await expect(domain.flow.advance(id, "browser-1", sessionId)).rejects.toBeInstanceOf(InteractionEnded);

    const elsewhere = await domain.flow.load(id, "browser-2").catch((e: unknown) => e);
    expect(elsewhere).not.toBeInstanceOf(InteractionEnded);
    expect(elsewhere).toMatchObject({ error: "invalid_request" });
  });

  it("past its lifetime, it has expired", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const id = interactionIdOf(await domain.start(rp));
    domain.time.advance(lifetimes.interactionMs - 1);
    await domain.flow.load(id, "browser-1");
    domain.time.advance(1);
    await expect(domain.flow.load(id, "browser-1")).rejects.toMatchObject({ why: "expired" });
  });

  it("cancelled: access_denied at the redirect_uri, and the interaction has ended", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const interaction = await domain.flow.load(interactionIdOf(await domain.start(rp, { state: "xyz" })), "browser-1");
    expect(errorOf(await domain.flow.cancel(interaction))).toEqual({ error: "access_denied", state: "xyz", iss: issuer, code: null });
    await expect(domain.flow.load(interaction.id, "browser-1")).rejects.toMatchObject({ why: "completed" });
  });

  it("belongs to its user: another user's session does not move it on", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const first = await domain.flow.startSession(await domain.user());
    const id = interactionIdOf(await domain.start(rp, {}, first));
    const second = await domain.flow.startSession(await domain.user());
    expect(pageOf(await domain.flow.advance(id, "browser-1", second))).toBe("login");
  });

  it("keeps the user it first met through a session on a later page: another user's session then does not count", async () => {
    const domain = new OidcDomain();
    const rp = await domain.register();
    const id = interactionIdOf(await domain.start(rp));
    const first = await domain.flow.startSession(await domain.user());
    expect(pageOf(await domain.flow.advance(id, "browser-1", first))).toBe("consent");
    const second = await domain.flow.startSession(await domain.user());
    expect(pageOf(await domain.flow.advance(id, "browser-1", second))).toBe("login");
  });
});

describe("the session", () => {
  it("ended: it is gone, and the next request starts at the login page (prompt=none: login_required)", async () => {
    const { domain, rp, sessionId } = await signedInWithGrant();
    // As SessionEndings ends it: its statement deletes the row.
    await domain.stores.oidc.deleteSession(sha256Hex(sessionId));
    expect(await domain.flow.session(sessionId)).toBeUndefined();
    expect(pageOf(await domain.start(rp, {}, sessionId))).toBe("login");
    expect(errorOf(await domain.start(rp, { prompt: "none" }, sessionId)).error).toBe("login_required");
  });

  it("past its lifetime, it counts as none", async () => {
    const { domain, rp, sessionId } = await signedInWithGrant();
    domain.time.advance(lifetimes.sessionMs - 1);
    codeOf(await domain.start(rp, {}, sessionId));
    domain.time.advance(1);
    expect(pageOf(await domain.start(rp, {}, sessionId))).toBe("login");
  });

  it("is stored by its hash only", async () => {
    const domain = new OidcDomain();
    const sessionId = await domain.flow.startSession(await domain.user());
    expect([...domain.stores.tables.sessions.keys()]).toEqual([sha256Hex(sessionId)]);
  });

  it("of a client other than the grant's: consent is asked again", async () => {
    const { domain, sessionId } = await signedInWithGrant();
    const other = await domain.register(client({ client_id: "rp-2" }));
    expect(pageOf(await domain.start(other, {}, sessionId))).toBe("consent");
  });
});

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { EndSession } from "../../src/domain/oidc/end-session.ts";
import { sha256Hex } from "../../src/domain/oidc/flow/secrets.ts";
import { OAuthError } from "../../src/domain/oidc/oauth-error.ts";
import { client, issuer, OidcDomain } from "../support/oidc-domain.ts";

/** A signed-in browser, and the end-session steps over the in-memory domain; sessions end as SessionEndings ends them (the row deleted), counted. */
async function signedIn() {
  const domain = new OidcDomain();
  const rp = await domain.register(client({ post_logout_redirect_uris: ["https://rp.example/bye"] }));
  const user = await domain.user();
  const sessionId = await domain.flow.startSession(user);
  const ended: string[] = [];
  const endSession = new EndSession({
    issuer,
    keys: domain.keys,
    clients: domain.stores.clients,
    secretKey: randomBytes(32),
    sessions: domain.flow,
    users: domain.users,
    sessionEndings: {
      async endSession(id) {
        ended.push(id);
        await domain.stores.oidc.deleteSession(sha256Hex(id));
        return 1;
      },
    },
  });
  return { domain, rp, user, sessionId, ended, endSession };
}

const back = { client_id: "rp", post_logout_redirect_uri: "https://rp.example/bye", state: "s1" };

describe("EndSession: the end-session endpoint's steps (RP-Initiated Logout 1.0)", () => {
  it("without a session: signed out at once, to the registered post_logout_redirect_uri with state, and nothing ended", async () => {
    const { endSession, ended } = await signedIn();
    const step = await endSession.step(back, undefined, true);
    expect(step).toMatchObject({ step: "signed_out", redirectTo: "https://rp.example/bye?state=s1", sessionEnded: false });
    expect(ended).toEqual([]);
  });

  it("with a session: asks the user, naming them, with a token bound to the session; a request alone ends nothing", async () => {
    const { endSession, ended, sessionId, user, domain } = await signedIn();
    const step = await endSession.step(back, sessionId, false);
    expect(step).toMatchObject({ step: "confirm", userLogin: user.login, refused: false, request: { postLogoutRedirectUri: "https://rp.example/bye", state: "s1" } });
    expect(ended).toEqual([]);
    expect(await domain.flow.session(sessionId)).toBeDefined();
  });

  it("a confirmation with the session's token ends the session through SessionEndings, then signs out", async () => {
    const { endSession, ended, sessionId, domain } = await signedIn();
    const asked = await endSession.step(back, sessionId, false);
    const csrf = asked.step === "confirm" ? asked.csrfToken : "";
    const step = await endSession.step({ ...back, csrf }, sessionId, true);
    expect(step).toMatchObject({ step: "signed_out", redirectTo: "https://rp.example/bye?state=s1", sessionEnded: true });
    expect(ended).toEqual([sessionId]);
    expect(await domain.flow.session(sessionId)).toBeUndefined();
  });

  it("a confirmation without this session's token (none, or another session's) is refused and asked again: nothing ends", async () => {
    const { endSession, ended, sessionId, domain } = await signedIn();
    const other = await domain.flow.startSession(await domain.user());
    const othersToken = await endSession.step(back, other, false);
    for (const csrf of [undefined, "forged", othersToken.step === "confirm" ? othersToken.csrfToken : ""]) {
      const step = await endSession.step({ ...back, ...(csrf === undefined ? {} : { csrf }) }, sessionId, true);
      expect(step, String(csrf)).toMatchObject({ step: "confirm", refused: true });
    }
    expect(ended).toEqual([]);
  });

  it("an invalid request is refused before anything else: an unregistered post_logout_redirect_uri ends no session", async () => {
    const { endSession, ended, sessionId } = await signedIn();
    const asked = await endSession.step(back, sessionId, false);
    const csrf = asked.step === "confirm" ? asked.csrfToken : "";
    const refused = endSession.step({ ...back, post_logout_redirect_uri: "https://evil.example/", csrf }, sessionId, true);
    await expect(refused).rejects.toBeInstanceOf(OAuthError);
    await expect(refused).rejects.toMatchObject({ error: "invalid_request" });
    expect(ended).toEqual([]);
  });
});

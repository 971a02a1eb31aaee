import type { SessionEndings } from "./backchannel-logout/session-endings.ts";
import type { AuthorizationFlow } from "./flow/authorization-flow.ts";
import type { SigningKeys } from "./keys/signing-keys.ts";
import { confirmsLogout, logoutConfirmationToken, resolveLogoutRequest, signedOutRedirect, type LogoutRequest } from "./logout.ts";
import type { RawParameters } from "./parameters.ts";
import type { ClientLookup } from "./stores.ts";
import type { OidcUsers } from "./users.ts";

/** What the end-session endpoint answers a request with. */
export type EndSessionStep =
  /**
   * Signed out: nobody was signed in, or the confirmation ended the session
   * (`sessionEnded`: its cookie goes too). The browser goes to `redirectTo`,
   * or to the provider's signed-out page when there is none.
   */
  | { step: "signed_out"; request: LogoutRequest; redirectTo: string | undefined; sessionEnded: boolean }
  /**
   * The user is asked to confirm, with a token bound to the session;
   * `refused` when a confirmation came without this session's token (not
   * from our page): it is asked again, and nothing ended.
   */
  | { step: "confirm"; request: LogoutRequest; csrfToken: string; userLogin: string | undefined; refused: boolean };

export interface EndSessionDependencies {
  issuer: string;
  keys: SigningKeys;
  clients: ClientLookup;
  secretKey: Buffer;
  sessions: Pick<AuthorizationFlow, "session">;
  users: Pick<OidcUsers, "find">;
  sessionEndings: Pick<SessionEndings, "endSession">;
}

/**
 * The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0): the
 * request is validated (resolveLogoutRequest), then the user confirms with
 * a button, and only a confirmation carrying the session's token ends the
 * session, through SessionEndings, which queues the clients' logout tokens
 * (Back-Channel Logout). The transport reads the request and the cookie and
 * shows what the step says.
 */
export class EndSession {
  constructor(private readonly deps: EndSessionDependencies) {}

  /**
   * The step for a request's parameters, the browser's session (its cookie
   * value) and whether the request is a confirmation (a POST with
   * confirm=yes; a link or an image alone never signs anyone out).
   */
  async step(raw: RawParameters, sessionId: string | undefined, confirming: boolean): Promise<EndSessionStep> {
    // An invalid request throws: it is never redirected (the target is what is being checked).
    const request = await resolveLogoutRequest(raw, this.deps);
    // Nobody is signed in here: nothing to confirm and nothing to end.
    if (!sessionId) return { step: "signed_out", request, redirectTo: signedOutRedirect(request), sessionEnded: false };
    if (confirming && confirmsLogout(this.deps.secretKey, sessionId, raw.csrf)) {
      await this.deps.sessionEndings.endSession(sessionId);
      return { step: "signed_out", request, redirectTo: signedOutRedirect(request), sessionEnded: true };
    }
    const session = await this.deps.sessions.session(sessionId);
    const user = session ? await this.deps.users.find(session.userId) : undefined;
    return { step: "confirm", request, csrfToken: logoutConfirmationToken(this.deps.secretKey, sessionId), userLogin: user?.login, refused: confirming };
  }
}

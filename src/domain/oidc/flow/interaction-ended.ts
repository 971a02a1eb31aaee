/**
 * A page of an interaction that has ended, reached again in the browser that
 * started it (the back button, a bookmark, a tab left open past its lifetime):
 * not a dead end but "start again", with a way back to the application. The
 * way back is the request's own redirect_uri, matched at the authorization
 * endpoint, carrying `access_denied`, the request's `state` and `iss`, so the
 * application learns the attempt is over and can start a new one.
 */
export class InteractionEnded extends Error {
  override name = "InteractionEnded";
  constructor(
    /** `expired`: it outlived its lifetime unfinished; `completed`: it already went back to the application. */
    readonly why: "expired" | "completed",
    readonly clientName: string,
    /** The URL of the way back (a checked redirect_uri with the error). */
    readonly returnTo: string,
    /** The interaction's language: the user's switch, then the request's ui_locales. */
    readonly locales: { chosen: string | undefined; uiLocales: string[] | undefined },
  ) {
    super(`this sign-in request has ${why === "expired" ? "expired" : "already been completed"}`);
  }
}

import type { AuthorizationRequest } from "../authorization-request.ts";

/** Everything an interaction remembers between pages. Stored as JSON. */
export interface InteractionState {
  clientId: string;
  request: AuthorizationRequest;
  /** The user this interaction is for, once known (from the session or a login). */
  userId?: string | undefined;
  /** True after a login or re-authentication in this interaction (so prompt=login and max_age do not loop). */
  authenticated: boolean;
  consent?: "allow" | "deny" | undefined;
  /** The language the user chose on a page of this interaction; it outranks ui_locales and the browser's. */
  locale?: string | undefined;
  /** When a step-up of this interaction found the password right but another method wrong (epoch ms). */
  passwordVerifiedAt?: number | undefined;
}

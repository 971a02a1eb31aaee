import { html } from "../../pages/html.ts";

/**
 * The English catalogue, and the shape every catalogue has (`Messages`): a
 * catalogue that lacks a key, or has one this one lacks, does not compile, and
 * test/unit/i18n-catalogues.test.ts says which key at run time. Sections are
 * per page; a new page adds its own section here and in every other language.
 * Messages with values are functions; numbers, lists and dates reach them
 * already formatted (format.ts), so word order is each language's own.
 */
export const en = {
  common: {
    languageSwitch: "Language",
    signedInAs: (login: string) => html`Signed in as <strong>${login}</strong>`,
    none: "none",
    yes: "yes",
    no: "no",
  },
  login: {
    title: "Sign in",
    lead: (client: string) => html`Sign in to continue to <strong class="client">${client}</strong>`,
    username: "Username",
    password: "Password",
    submit: "Sign in",
    missingFields: "Enter your username and password.",
    wrongCredentials: "The username or password is not correct.",
    throttled: (wait: string) => `Too many failed sign-in attempts. Try again in ${wait}.`,
  },
  reauth: {
    title: "Confirm it's you",
    lead: (client: string, methods: string, level: string) =>
      html`<strong class="client">${client}</strong> asks you to confirm it's you${methods === "" ? "" : ` with ${methods}`} (level: ${level}).`,
    methodPassword: "your password",
    methodOtp: "a one-time code from your authenticator app",
    lastSignIn: (when: string) => `You last signed in on ${when}.`,
    because: "This is needed because:",
    reasons: {
      prompt_login: "the application asked you to sign in again",
      max_age: "your last sign-in is older than the application allows",
      acr: "the application needs a stronger sign-in than your current one",
    },
    acrLevels: { low: "Low", high: "High", very_high: "Very high" },
    password: "Password",
    otp: "One-time code",
    otpHint: "The 6-digit code shown in your authenticator app.",
    mockOtp: (code: string) => html`Mock environment: the current code is <strong>${code}</strong>`,
    submit: "Continue",
    throttled: "Too many failed attempts. Try again later.",
    wrongPassword: "The password is not correct.",
    wrongOtp: "The one-time code is not correct or was already used.",
  },
  consent: {
    title: "Allow access",
    heading: (client: string) => html`<span class="client">${client}</span> wants to access your account`,
    asksFor: "It asks for",
    andThisAccess: "And this specific access",
    asksForAccess: "It asks for this access",
    scopes: {
      openid: "Confirm your identity",
      profile: "Your name and profile",
      email: "Your email address",
      offline_access: "Stay connected when you are not using the app",
    },
    /** RFC 9396 §2.2 common members. */
    members: { actions: "Actions", locations: "Locations", datatypes: "Data types", identifier: "Identifier", privileges: "Privileges" },
    /** Known authorization_details types; other types are shown by their name. */
    detailTypes: { payment_initiation: "Payment initiation", account_information: "Account information" } as Record<string, string>,
    replaces: (client: string) => html`Allowing replaces the access you gave <span class="client">${client}</span> before.`,
    merges: (client: string) => html`Allowing adds to the access you already gave <span class="client">${client}</span>.`,
    allow: "Allow",
    deny: "Deny",
    denyNote: (client: string) => html`If you deny, <span class="client">${client}</span> gets no access and you return to it.`,
    chooseAllowOrDeny: "Choose Allow or Deny.",
  },
  logout: {
    title: "Sign out",
    question: "End your session on this device?",
    asks: (client: string) => html`<strong>${client}</strong> asks you to sign out. `,
    submit: "Sign out",
    expired: "The sign-out form has expired or did not come from this site. Confirm again to sign out.",
    signedOutTitle: "Signed out",
    signedOutHeading: "You are signed out",
    signedOutLead: "You can close this window.",
  },
  errors: {
    clientTitle: "This application can't sign you in",
    requestTitle: "This sign-in request can't be completed",
    advice: "Return to the application and try again. If the problem continues, contact the application's support and mention the error code below.",
    errorCode: "Error code",
    details: "Details",
    notFound: "Page not found",
    tooLarge: "Request too large",
    unavailable: "Temporarily unavailable",
    serverError: "Something went wrong",
    badRequest: "This request cannot be processed",
    /** What a known error_description says, for people; see error-descriptions.ts. */
    descriptions: {
      clientIdRequired: "The request does not say which application it comes from (client_id is missing).",
      clientUnknown: "The application is not registered with this provider.",
      redirectUriRequired: "The request does not say where to return to (redirect_uri is missing).",
      redirectUriUnregistered: "The return address (redirect_uri) is not one registered for this application.",
      parRequired: "This application must send its request in advance (pushed authorization request).",
      requestUriUnknown: "The prepared request is not one this provider issued.",
      requestUriForeign: "The prepared request belongs to another application.",
      requestUriExpired: "The prepared request has expired.",
      requestUriUsed: "The prepared request has already been used.",
      parameterRepeated: (name: string) => `The parameter ${name} appears more than once.`,
      parameterMalformed: (name: string) => `The parameter ${name} is malformed.`,
      interactionExpired: "This sign-in request has expired or belongs to another browser. Return to the application and start again.",
      interactionClientGone: "The application of this sign-in request is no longer registered. Return to the application and start again.",
      interactionCompleted: "This sign-in request was already completed. Return to the application and start again.",
      formExpired: "The form has expired or did not come from this site. Go back, reload the page and try again.",
      chooseAllowOrDeny: "Choose Allow or Deny.",
      logoutClientMismatch: "client_id does not match the application the ID token was issued to.",
      logoutClientUnknown: "The application is not registered with this provider.",
      logoutRedirectNeedsClient: "A return address after sign-out needs the application (client_id or id_token_hint).",
      logoutRedirectUnregistered: "The return address after sign-out is not registered for this application.",
      logoutHintInvalid: "The ID token given is not one this provider issued.",
      notFound: "There is no page at this address.",
      tooLarge: "The request is larger than this service accepts.",
      malformed: "The request is malformed.",
      unavailable: "The service is temporarily unavailable. Try again in a moment.",
      serverError: "An unexpected error occurred.",
    },
    /** For an error whose description has no words above: said by its code. */
    byCode: {
      invalid_request: "The request is missing something or contains something not allowed.",
      invalid_request_uri: "The prepared request cannot be used.",
      invalid_client: "The application could not be identified.",
      unauthorized_client: "The application may not make this request.",
      other: "The request cannot be processed.",
    } as Record<string, string> & { other: string },
  },
  demo: {
    succeeded: "Authorization succeeded",
    failed: "Authorization failed",
    intro: "This is the demo application of the mock environment. It shows the parameters the provider sent back to its redirect URI.",
    providerError: (error: string) => html`The provider answered with the error <code>${error}</code>.`,
    neither: "The response carries neither an authorization code nor an error.",
    issued: "The provider issued an authorization code. A real application would now exchange it at the token endpoint.",
    redeem: html`Redeem it yourself within 60 seconds (add <code>-d code_verifier=…</code> if the request carried a <code>code_challenge</code>):`,
    parameters: "Response parameters",
    notReturned: "not returned",
    labels: {
      code: "Authorization code",
      state: "State",
      iss: "Issuer",
      error: "Error",
      error_description: "Description",
      error_uri: "More information",
    } as Record<string, string>,
  },
  home: {
    title: "Home",
    running: (mode: string) => html`OpenID Connect provider and certificate status service, running in <strong>${mode}</strong> mode.`,
    operations: "Operations",
  },
};

export type Messages = typeof en;

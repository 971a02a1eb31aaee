import { describe, expect, it } from "vitest";
import { renderLoginPage } from "../../src/http/pages/login.ts";
import { renderReauthPage } from "../../src/http/pages/reauth.ts";
import { describeScope, renderConsentPage } from "../../src/http/pages/consent.ts";
import { renderAuthorizationErrorPage } from "../../src/http/pages/error-page.ts";
import { renderDemoCallbackPage } from "../../src/http/mock/demo-callback-page.ts";
import { renderJpkiSignInPage } from "../../src/http/pages/jpki-sign.ts";
import { messagesFor } from "../../src/http/i18n/catalogue.ts";
import type { PageLanguage } from "../../src/http/pages/layout.ts";

const english: PageLanguage = { locale: "en", t: messagesFor("en"), timeZone: "Asia/Tokyo" };

/** Hostile text: a tag, both quotes and an ampersand. */
const evil = `Evil <script>alert("x")</script> & 'co'`;
const evilEscaped = "Evil &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;";
/** Tries to break out of a quoted attribute. */
const breakout = `tok"><img src=x onerror=alert(1)>`;
const breakoutEscaped = "tok&quot;&gt;&lt;img src=x onerror=alert(1)&gt;";

type Attrs = Record<string, string | true>;

function parseAttrs(tag: string): Attrs {
  const attrs: Attrs = {};
  const body = tag.replace(/^<\w+/, "").replace(/\/?>$/, "");
  for (const m of body.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:="([^"]*)")?/g)) attrs[m[1]!] = m[2] ?? true;
  return attrs;
}

function tags(page: string, name: string): Attrs[] {
  return [...page.matchAll(new RegExp(`<${name}\\b[^>]*>`, "g"))].map((m) => parseAttrs(m[0]));
}

function inputs(page: string): Attrs[] {
  return tags(page, "input");
}

function input(page: string, name: string): Attrs | undefined {
  return inputs(page).find((i) => i.name === name);
}

/** The visible text, tags removed and entities decoded. */
/** The text without any white space: inline markup (a bold member name) puts none between its words and the next. */
function squeezed(page: string): string {
  return text(page).replace(/\s+/g, "");
}

function text(page: string): string {
  return page
    .replace(/<style>[\s\S]*?<\/style>/g, "")
    .replace(/<[^>]*>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");
}

function expectNoRawMarkup(page: string): void {
  expect(page).not.toContain("<script");
  expect(page).not.toContain("<img");
  expect(page).not.toMatch(/<(b|i|u|s)>/);
}

/** Every visible input has an id with a `<label for>`, and every label points at an existing input. */
function expectLabelledInputs(page: string): void {
  const visible = inputs(page).filter((i) => i.type !== "hidden" && i.hidden === undefined);
  expect(visible.length).toBeGreaterThan(0);
  const labelTargets = tags(page, "label").map((l) => l.for);
  const ids = visible.map((i) => i.id);
  for (const i of visible) {
    expect(typeof i.id, `input ${String(i.name)} has an id`).toBe("string");
    expect(labelTargets).toContain(i.id);
  }
  for (const target of labelTargets) expect(ids).toContain(target);
  expect(new Set(ids).size).toBe(ids.length);
}

/** The page's main form first; after it at most the cancel form, so that Enter in a field never cancels. */
function expectForm(page: string, action: string, csrf: string): void {
  const forms = tags(page, "form");
  expect(forms.length).toBeGreaterThanOrEqual(1);
  expect(forms.slice(1).every((f) => f.class === "cancel")).toBe(true);
  expect(forms[0]).toMatchObject({ method: "post", action });
  expect(input(page, "csrf")).toMatchObject({ type: "hidden", value: csrf });
  const formBody = page.slice(page.indexOf("<form"), page.indexOf("</form>"));
  expect(formBody).toContain('name="csrf"');
}

function heading(page: string): string {
  return text(/<h1>([\s\S]*?)<\/h1>/.exec(page)?.[1] ?? "").trim();
}

function alerts(page: string): string[] {
  return [...page.matchAll(/<div[^>]*role="alert"[^>]*>([\s\S]*?)<\/div>/g)].map((m) => text(m[1]!).trim());
}

describe("login page", () => {
  const base = { action: "/authorize/login?interaction=abc&step=1", cancelAction: "/auth/cancel?interaction=abc", csrfToken: "csrf-123", clientName: "Acme Banking" };

  it("posts the credentials and the csrf token to the action", () => {
    const page = renderLoginPage(english, base);
    expect(page.startsWith("<!doctype html>")).toBe(true);
    expectForm(page, "/authorize/login?interaction=abc&amp;step=1", "csrf-123");
    expect(input(page, "login")).toMatchObject({ id: "login", type: "text", autocomplete: "username", required: true, maxlength: "256" });
    expect(input(page, "password")).toMatchObject({ id: "password", type: "password", autocomplete: "current-password", required: true, maxlength: "1024" });
    // novalidate: an empty field is answered by the page in its language, not by the browser.
    expect(page).toMatch(/<form method="post" action="[^"]*" id="login-form" novalidate>/);
    // The primary button first (Enter presses it), then the cancel form's.
    expect(tags(page, "button")).toEqual([{ type: "submit", class: "button primary" }, { type: "submit", class: "button secondary" }]);
    expect(text(page)).toContain("Sign in to continue to Acme Banking");
    expectLabelledInputs(page);
  });

  it("shows no alert without an error, and the error in role=alert", () => {
    expect(alerts(renderLoginPage(english, base))).toEqual([]);
    const page = renderLoginPage(english, { ...base, error: "The username or password is wrong." });
    expect(alerts(page)).toEqual(["The username or password is wrong."]);
    expect(input(page, "password")).toMatchObject({ "aria-invalid": "true", "aria-describedby": "form-error" });
  });

  it("shows a notice as status and prefills the login hint", () => {
    const page = renderLoginPage(english, { ...base, notice: "You have been signed out.", loginHint: "alice@example.com" });
    expect(page).toMatch(/<div class="notice" role="status"><p>You have been signed out.<\/p><\/div>/);
    expect(input(page, "login")?.value).toBe("alice@example.com");
    expect(input(page, "password")?.autofocus).toBe(true);
    expect(input(page, "login")?.autofocus).toBeUndefined();
  });

  it("escapes client name, login hint, error, notice, action and token", () => {
    const page = renderLoginPage(english, { action: breakout, cancelAction: breakout, csrfToken: breakout, clientName: evil, loginHint: evil, error: evil, notice: evil });
    expectNoRawMarkup(page);
    expect(page).toContain(`<strong class="client">${evilEscaped}</strong>`);
    expect(page).toContain(`value="${evilEscaped}"`);
    expect(page).toContain(`action="${breakoutEscaped}"`);
    expect(page).toContain(`name="csrf" value="${breakoutEscaped}"`);
    expect(alerts(page)).toEqual([evil]);
    expect(input(page, "login")?.value).toBe(evilEscaped);
  });
});

describe("re-authentication page", () => {
  const base = {
    action: "/authorize/reauth",
    cancelAction: "/auth/cancel?interaction=abc",
    csrfToken: "csrf-456",
    clientName: "Acme Banking",
    userLogin: "alice",
    requiredAcr: "high",
    needsPassword: false,
    needsOtp: true,
    reasons: ["you signed in more than 5 minutes ago", "the application asked you to sign in again"],
  };

  it("asks for a one-time code only, says which method and why", () => {
    const page = renderReauthPage(english, base);
    expectForm(page, "/authorize/reauth", "csrf-456");
    expect(input(page, "password")).toBeUndefined();
    expect(inputs(page).filter((i) => i.type === "password")).toEqual([]);
    // The format is checked by the server, which says what is wrong in the page's language (not the browser's generic words).
    expect(input(page, "otp")).toMatchObject({ id: "otp", inputmode: "numeric", autocomplete: "one-time-code", required: true, autofocus: true });
    expect(input(page, "otp")!.pattern).toBeUndefined();
    expect(tags(page, "form")[0]!.novalidate).toBe(true);
    const t = text(page);
    expect(t).toContain("Acme Banking asks you to confirm it's you with a one-time code from your authenticator app (level: High)");
    expect(t).toContain("Signed in as alice");
    expect(page).toContain("<li>you signed in more than 5 minutes ago</li>");
    expect(page).toContain("<li>the application asked you to sign in again</li>");
    expect(tags(page, "button")).toHaveLength(2);
    expect(t).toContain("Continue");
    expectLabelledInputs(page);
  });

  it("asks for a password only", () => {
    const page = renderReauthPage(english, { ...base, needsPassword: true, needsOtp: false, requiredAcr: "low" });
    expect(input(page, "password")).toMatchObject({ id: "password", type: "password", autocomplete: "current-password", maxlength: "1024" });
    expect(input(page, "otp")).toBeUndefined();
    expect(page).not.toContain("one-time-code");
    expect(text(page)).toContain("asks you to confirm it's you with your password (level: Low)");
    expectLabelledInputs(page);
  });

  it("asks for both, password first", () => {
    const page = renderReauthPage(english, { ...base, needsPassword: true });
    const names = inputs(page).map((i) => i.name).filter((n) => n === "password" || n === "otp");
    expect(names).toEqual(["password", "otp"]);
    expect(text(page)).toContain("with your password and a one-time code from your authenticator app (level: High)");
    expectLabelledInputs(page);
  });

  it("leaves out the reasons list when there is none", () => {
    expect(renderReauthPage(english, { ...base, reasons: [] })).not.toContain('class="reasons"');
  });

  it("shows the mock code only when given and a code is asked for", () => {
    expect(renderReauthPage(english, base)).not.toContain("Mock environment");
    expect(text(renderReauthPage(english, { ...base, mockOtpHint: "123456" }))).toContain("Mock environment: the current code is 123456");
    expect(text(renderReauthPage(english, { ...base, mockOtpHint: "Mock environment: use 654321" }))).toContain("Mock environment: use 654321");
    expect(renderReauthPage(english, { ...base, needsOtp: false, needsPassword: true, mockOtpHint: "123456" })).not.toContain("Mock environment");
  });

  it("shows the error in role=alert", () => {
    const page = renderReauthPage(english, { ...base, error: "That code is not valid." });
    expect(alerts(page)).toEqual(["That code is not valid."]);
    expect(input(page, "otp")).toMatchObject({ "aria-invalid": "true", "aria-describedby": "otp-hint form-error" });
  });

  it("marks only the field the error is about", () => {
    const wrongCode = renderReauthPage(english, { ...base, needsPassword: true, error: "Wrong code.", invalidField: "otp" });
    expect(input(wrongCode, "otp")).toMatchObject({ "aria-invalid": "true", "aria-describedby": "otp-hint form-error" });
    expect(input(wrongCode, "password")?.["aria-invalid"]).toBeUndefined();
    expect(input(wrongCode, "password")?.["aria-describedby"]).toBeUndefined();
    const wrongPassword = renderReauthPage(english, { ...base, needsPassword: true, error: "Wrong password.", invalidField: "password" });
    expect(input(wrongPassword, "password")).toMatchObject({ "aria-invalid": "true", "aria-describedby": "form-error" });
    expect(input(wrongPassword, "otp")?.["aria-invalid"]).toBeUndefined();
    expect(input(wrongPassword, "otp")).toMatchObject({ "aria-describedby": "otp-hint" });
  });

  it("escapes every value", () => {
    const page = renderReauthPage(english, {
      ...base,
      action: breakout,
      csrfToken: breakout,
      clientName: evil,
      userLogin: evil,
      requiredAcr: evil,
      needsPassword: true,
      reasons: [evil],
      error: evil,
      mockOtpHint: evil,
    });
    expectNoRawMarkup(page);
    expect(page).toContain(`<strong class="client">${evilEscaped}</strong>`);
    expect(page).toContain(`(level: ${evilEscaped})`);
    expect(page).toContain(`<li>${evilEscaped}</li>`);
    expect(page).toContain(`action="${breakoutEscaped}"`);
    expect(alerts(page)).toEqual([evil]);
  });
});

describe("consent page", () => {
  const base = {
    action: "/authorize/consent",
    csrfToken: "csrf-789",
    clientName: "Acme Banking",
    userLogin: "alice",
    scopes: ["openid", "profile", "email", "offline_access", "accounts:read"],
    authorizationDetails: [] as Record<string, unknown>[],
  };

  it("describes scopes in words", () => {
    expect(describeScope(english.t, "openid")).toBe("Confirm your identity");
    expect(describeScope(english.t, "profile")).toBe("Your name and profile");
    expect(describeScope(english.t, "email")).toBe("Your email address");
    expect(describeScope(english.t, "offline_access")).toBe("Stay connected when you are not using the app");
    expect(describeScope(english.t, "accounts:read")).toBe("accounts:read");
    expect(describeScope(english.t, "constructor")).toBe("constructor");
  });

  it("lists each scope label, and one form with allow and deny", () => {
    const page = renderConsentPage(english, base);
    expectForm(page, "/authorize/consent", "csrf-789");
    for (const label of [
      "Confirm your identity",
      "Your name and profile",
      "Your email address",
      "Stay connected when you are not using the app",
      "accounts:read",
    ]) {
      expect(page).toContain(`<li>${label}</li>`);
    }
    const t = text(page);
    expect(t).toContain("Acme Banking wants to access your account");
    expect(t).toContain("Signed in as alice");
    const form = page.slice(page.indexOf("<form"), page.indexOf("</form>"));
    const buttons = tags(form, "button");
    expect(buttons).toEqual([
      { type: "submit", name: "decision", value: "allow", class: "button primary" },
      { type: "submit", name: "decision", value: "deny", class: "button secondary" },
    ]);
    expect(form).toMatch(/value="allow"[^>]*>Allow<\/button>/);
    expect(form).toMatch(/value="deny"[^>]*>Deny<\/button>/);
    expect(page.match(/class="button primary"/g)).toHaveLength(1);
  });

  it("renders each authorization_details member in words", () => {
    const page = renderConsentPage(english, {
      ...base,
      authorizationDetails: [
        {
          type: "payment_initiation",
          actions: ["initiate", "status"],
          locations: ["https://bank.example/payments"],
          datatypes: ["transactions"],
          identifier: "account-42",
          privileges: ["admin"],
          instructedAmount: { currency: "EUR", amount: "123.50" },
          recurring: false,
          count: 3,
          note: null,
        },
        { type: "account_information" },
      ],
    });
    expect(page).toContain(`<h3>Payment initiation <span class="muted"><code>payment_initiation</code></span></h3>`);
    expect(page).toContain(`<h3>Account information <span class="muted"><code>account_information</code></span></h3>`);
    expect(page).toContain("<dt>Actions</dt><dd><ul><li>Start a payment</li><li>Check the payment&#39;s status</li></ul></dd>");
    expect(page).toContain("<dt>Locations</dt><dd><ul><li>https://bank.example/payments</li></ul></dd>");
    expect(page).toContain("<dt>Data types</dt><dd><ul><li>transactions</li></ul></dd>");
    expect(page).toContain("<dt>Identifier</dt><dd>account-42</dd>");
    expect(page).toContain("<dt>Privileges</dt><dd><ul><li>admin</li></ul></dd>");
    const t = squeezed(page);
    expect(t).toContain("Amount:€123.50");
    expect(t).toContain("Recurring:no");
    expect(t).toContain("Count:3");
    expect(t).toContain("Note:none");
    expect(page.match(/<section class="detail">/g)).toHaveLength(2);
  });

  it("shows amounts as money in each language, never rounded, and actions in words", () => {
    const japanese: PageLanguage = { locale: "ja", t: messagesFor("ja"), timeZone: "Asia/Tokyo" };
    const payment = { type: "payment_initiation", actions: ["initiate", "approve_later"], instructedAmount: { currency: "JPY", amount: "1250" } };
    const ja = squeezed(renderConsentPage(japanese, { ...base, authorizationDetails: [payment] }));
    expect(ja).toContain("金額：1,250円");
    expect(ja).toContain("支払いの開始");
    // An action the catalogue does not know keeps its name.
    expect(ja).toContain("approve_later");
    expect(ja).not.toContain("instructedAmount");
    const en = squeezed(renderConsentPage(english, { ...base, authorizationDetails: [payment] }));
    expect(en).toContain("Amount:¥1,250");
    expect(en).toContain("Startapayment");
    const odd = (amount: unknown, currency: unknown = "JPY") =>
      squeezed(renderConsentPage(japanese, { ...base, authorizationDetails: [{ type: "payment_initiation", instructedAmount: { currency, amount } }] }));
    expect(odd("1250.5")).toContain("金額：1,250.5円");
    expect(odd("1234567.891", "EUR")).toContain("金額：1,234,567.891ユーロ");
    expect(odd(1250)).toContain("金額：1,250円");
    // Not money: shown member by member, as sent.
    expect(odd("12,50")).toContain("金額：通貨：JPY金額：12,50");
    expect(odd("1250", "yen")).toContain("通貨：yen");
  });

  it("shows an unknown type and its members readably", () => {
    const page = renderConsentPage(english, {
      ...base,
      authorizationDetails: [{ type: "tax_filing", filingYear: 2026, submit_return: true, taxOffice: { office_name: "Shibuya" } }],
    });
    expect(page).toContain("<h3>tax_filing</h3>");
    const t = squeezed(page);
    expect(t).toContain("Filingyear:2026");
    expect(t).toContain("Submitreturn:yes");
    expect(t).toContain("Taxoffice:Officename:Shibuya");
  });

  it("explains replacing or adding to an earlier grant", () => {
    expect(text(renderConsentPage(english, { ...base, grantAction: "replace" }))).toContain("replaces the access you gave Acme Banking before");
    expect(text(renderConsentPage(english, { ...base, grantAction: "merge" }))).toContain("adds to the access you already gave Acme Banking");
    expect(renderConsentPage(english, { ...base, grantAction: "create" })).not.toContain('class="notice"');
  });

  it("escapes client, user, scopes, detail keys and nested values", () => {
    const page = renderConsentPage(english, {
      ...base,
      action: breakout,
      csrfToken: breakout,
      clientName: evil,
      userLogin: evil,
      scopes: ["<b>scope</b>"],
      authorizationDetails: [
        {
          type: "<b>type</b>",
          actions: ["<s>act</s>"],
          identifier: evil,
          "<i>key</i>": { "<u>nested</u>": ["<s>deep</s>", { [evil]: evil }] },
        },
      ],
    });
    expectNoRawMarkup(page);
    expect(page).toContain("<h1><span class=\"client\">" + evilEscaped + "</span>");
    expect(page).toContain("<li>&lt;b&gt;scope&lt;/b&gt;</li>");
    expect(page).toContain("<h3>&lt;b&gt;type&lt;/b&gt;</h3>");
    expect(page).toContain("<li>&lt;s&gt;act&lt;/s&gt;</li>");
    expect(page).toContain(`<dt>Identifier</dt><dd>${evilEscaped}</dd>`);
    expect(page).toContain('<span class="key">&lt;i&gt;key&lt;/i&gt;</span>: ');
    expect(page).toContain('<span class="key">&lt;u&gt;nested&lt;/u&gt;</span>: ');
    expect(page).toContain("<li>&lt;s&gt;deep&lt;/s&gt;</li>");
    expect(page).toContain(`${evilEscaped}</span>: ${evilEscaped}`);
    expect(page).toContain(`action="${breakoutEscaped}"`);
  });

  it("stays escaped past the nesting limit", () => {
    let deep: unknown = "<b>bottom</b>";
    for (let i = 0; i < 12; i++) deep = { ["<i>level</i>"]: deep };
    const page = renderConsentPage(english, { ...base, authorizationDetails: [{ type: "t", deep }] });
    expectNoRawMarkup(page);
    expect(page).toContain("&lt;b&gt;bottom&lt;/b&gt;");
  });
});

describe("authorization error page", () => {
  it("explains the error without redirecting", () => {
    const page = renderAuthorizationErrorPage(english, { error: "invalid_request", description: "redirect_uri does not match a registered redirect URI of this client" });
    const t = text(page);
    expect(heading(page)).toBe("This sign-in request can't be completed");
    expect(alerts(page)).toEqual(["The return address (redirect_uri) is not one registered for this application."]);
    expect(t).toContain("Return to the application and try again");
    expect(page).toContain("Error code: <code>invalid_request</code>");
    expect(tags(page, "form")).toEqual([]);
  });

  it("names an unknown client", () => {
    expect(heading(renderAuthorizationErrorPage(english, { error: "invalid_client", description: "unknown client" }))).toBe(
      "This application can't sign you in",
    );
  });

  it("escapes the error and the description", () => {
    const page = renderAuthorizationErrorPage(english, { error: evil, description: evil });
    expectNoRawMarkup(page);
    expect(page).toContain(`<code>${evilEscaped}</code>`);
    // A description the catalogue has no words for: said by the error code, the text itself shown as a detail.
    expect(alerts(page)).toEqual(["The request cannot be processed."]);
    expect(page).toContain(`Details: <code lang="en">${evilEscaped}</code>`);
  });
});

describe("demo callback page", () => {
  function rows(page: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const m of page.matchAll(/<tr><th scope="row">([\s\S]*?)<\/th><td>([\s\S]*?)<\/td><\/tr>/g)) {
      const key = /<code>([^<]*)<\/code>/.exec(m[1]!)?.[1] ?? text(m[1]!).trim();
      out[key] = text(m[2]!).trim();
    }
    return out;
  }

  const redeem = {
    tokenEndpoint: "http://localhost:3000/api/oidc/v1/token",
    redirectUri: "http://localhost:3000/demo/callback",
    clientId: "demo-client",
    secretFile: "data/demo-client-secret",
  };

  it("shows a code, and a curl command that redeems it without showing the secret", () => {
    const page = renderDemoCallbackPage(english, { params: { code: "abc123abc123abc123abc123", state: "s1", iss: "http://localhost:3000" }, redeem });
    expect(page).toContain("<h1>Authorization succeeded</h1>");
    expect(rows(page)).toEqual({ code: "abc123abc123abc123abc123", state: "s1", iss: "http://localhost:3000" });
    expect(page).toContain(
      "<pre><code>curl -u demo-client:$(cat data/demo-client-secret) -d grant_type=authorization_code -d code=abc123abc123abc123abc123 " +
        "-d redirect_uri=http://localhost:3000/demo/callback http://localhost:3000/api/oidc/v1/token</code></pre>",
    );
  });

  it("shows an error", () => {
    const page = renderDemoCallbackPage(english, {
      params: {
        error: "access_denied",
        error_description: "the user denied the request",
        state: "s2",
        iss: "http://localhost:3000",
        error_uri: "https://docs.example/e",
        extra: "x",
      },
      redeem,
    });
    expect(page).toContain("<h1>Authorization failed</h1>");
    expect(page).not.toContain("Authorization succeeded");
    expect(page).not.toContain("grant_type=authorization_code");
    expect(rows(page)).toEqual({
      error: "access_denied",
      error_description: "the user denied the request",
      state: "s2",
      iss: "http://localhost:3000",
      error_uri: "https://docs.example/e",
      extra: "x",
    });
    expect(page).toContain('<th scope="row">More information<span class="muted"><code>error_uri</code></span></th>');
    expect(alerts(page)[0]).toContain("access_denied");
  });

  it("fails when neither code nor error came back, and says so for a missing state", () => {
    const page = renderDemoCallbackPage(english, { params: {}, redeem });
    expect(page).toContain("<h1>Authorization failed</h1>");
    expect(page).not.toContain("<pre>");
    expect(rows(page).state).toBe("not returned");
  });

  it("escapes values and unknown parameter names", () => {
    const page = renderDemoCallbackPage(english, { params: { error: evil, error_description: evil, state: breakout, [evil]: evil }, redeem });
    expectNoRawMarkup(page);
    expect(page).toContain(`<td>${evilEscaped}</td>`);
    expect(page).toContain(`<td>${breakoutEscaped}</td>`);
    expect(page).toContain(`<th scope="row">${evilEscaped}</th>`);
  });

  it("offers no command for a code that could do harm in a shell", () => {
    const page = renderDemoCallbackPage(english, { params: { code: "$(touch /tmp/x)-aaaaaaaaaaaaaaaaaaaa", state: "s" }, redeem });
    expect(page).toContain("<h1>Authorization succeeded</h1>");
    expect(page).not.toContain("<pre>");
  });
});

describe("JPKI sign-in page", () => {
  const base = {
    action: "/auth/login/jpki?interaction=abc",
    cancelAction: "/auth/cancel?interaction=abc",
    passwordSignIn: "/auth/login?interaction=abc",
    csrfToken: "csrf-789",
    challenge: "c".repeat(43),
    challengeText: `shomei JPKI sign-in ${"c".repeat(43)}`,
    submit: "submit" as const,
    clientName: "Acme Banking",
  };

  it("labels a read-only field with the text to sign, never a <pre>; the copy button waits for its script", () => {
    const page = renderJpkiSignInPage(english, base);
    expect(tags(page, "label").find((l) => l.for === "challenge-text")).toBeDefined();
    expect(tags(page, "textarea").find((t) => t.id === "challenge-text")).toMatchObject({ readonly: true, "aria-describedby": "challenge-hint" });
    expect(page).not.toContain('<pre id="challenge-text"');
    expect(tags(page, "button").find((b) => b["data-copy"] === "challenge-text")).toMatchObject({ type: "button", hidden: true });
    expect(tags(page, "script").map((s) => s.src)).toEqual(["/assets/copy.js"]);
    // The signature is one line: Enter in it sends the form.
    expect(input(page, "signature")).toMatchObject({ type: "text", id: "signature" });
    // The main form first, then the cancel form; a link back to password sign-in.
    expectForm(page, "/auth/login/jpki?interaction=abc", "csrf-789");
    expect(page).toContain('href="/auth/login?interaction=abc" id="password-sign-in"');
  });

  it("after a refusal marks the field it is about and gives the pasted certificate back, escaped", () => {
    const pasted = "-----BEGIN CERTIFICATE-----\n</textarea><script>alert(1)</script>\n-----END CERTIFICATE-----";
    const page = renderJpkiSignInPage(english, { ...base, error: { code: "certificate_not_x509", message: "not a certificate" }, certificate: pasted });
    // Only the page's own script tag; the pasted text stays inside its field.
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).not.toContain("</textarea><script>");
    expect(page).toContain("&lt;/textarea&gt;&lt;script&gt;");
    const certificate = tags(page, "textarea").find((t) => t.id === "certificate")!;
    expect(certificate).toMatchObject({ "aria-invalid": "true", "aria-describedby": "certificate-hint form-error", autofocus: true });
    expect(input(page, "signature")!["aria-invalid"]).toBeUndefined();
    const signatureRefused = renderJpkiSignInPage(english, { ...base, error: { code: "signature_mismatch", message: "mismatch" } });
    expect(input(signatureRefused, "signature")).toMatchObject({ "aria-invalid": "true", autofocus: true });
    expect(tags(signatureRefused, "textarea").find((t) => t.id === "certificate")!["aria-invalid"]).toBeUndefined();
  });
});

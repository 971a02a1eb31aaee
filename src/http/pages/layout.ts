import { Html, html } from "./html.ts";
import type { Messages } from "../i18n/catalogue.ts";
import { localeNames, locales, type Locale } from "../i18n/locale.ts";

/*
 * Colours: every text at least 4.5:1 against what it is on, and the edges of
 * controls (fields, buttons, the language links) at least 3:1 (WCAG 1.4.3,
 * 1.4.11), in the light and the dark scheme alike; test/browser/keyboard-and-contrast.test.ts
 * measures them as rendered. --border is for separators only, never a control's edge.
 */
const styles = `
  :root { color-scheme: light dark; --accent: #2f5fd0; --accent-hover: #254db0; --accent-fg: #ffffff; --muted: #5b6270;
          --card: #ffffff; --bg: #f3f4f6; --fg: #111827; --border: #d1d5db; --control-border: #8a909a; --field: #ffffff; --subtle: #f9fafb;
          --danger: #b42318; --danger-bg: #fef3f2; --danger-border: #fecdca;
          --info: #1e4fa8; --info-bg: #eff4ff; --info-border: #c7d7fe;
          --warn: #8a5a00; --warn-bg: #fffaeb; --warn-border: #f7d99b;
          --ok: #067647; --focus: #2f5fd0; }
  @media (prefers-color-scheme: dark) {
    :root { --card: #1f2430; --bg: #12151c; --fg: #e5e7eb; --muted: #9ca3af; --border: #3b4252; --control-border: #7c8596; --field: #161a23; --subtle: #252b38;
            --accent: #6d8ff0; --accent-hover: #85a2f3; --accent-fg: #0b1020;
            --danger: #fda29b; --danger-bg: #3a1a1a; --danger-border: #6e2b2b;
            --info: #a4bcfd; --info-bg: #1a2340; --info-border: #2f3f75;
            --warn: #fec84b; --warn-bg: #33280f; --warn-border: #6b531d;
            --ok: #75e0a7; --focus: #85a2f3; }
  }
  * { box-sizing: border-box; }
  [hidden] { display: none !important; }
  /* System fonts only (nothing is downloaded): each platform's UI font, then the Japanese ones it ships. */
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", "Hiragino Sans", "Hiragino Kaku Gothic ProN", "Yu Gothic UI",
         "Meiryo", "Noto Sans CJK JP", "Noto Sans JP", sans-serif; background: var(--bg); color: var(--fg); }
  /* Japanese runs without spaces: more leading, strict line breaking, headings broken between phrases where supported. */
  :lang(ja) body { line-height: 1.7; line-break: strict; }
  :lang(ja) h1, :lang(ja) h2 { word-break: auto-phrase; }
  main { max-width: 28rem; margin: 8vh auto; padding: 2rem; background: var(--card); border-radius: 12px;
         box-shadow: 0 1px 3px rgba(0,0,0,.12), 0 8px 24px rgba(0,0,0,.06); }
  @media (max-width: 30rem) { main { margin: 0; min-height: 100vh; border-radius: 0; padding: 1.5rem 1.25rem; box-shadow: none; } }
  h1 { font-size: 1.4rem; margin: 0 0 1rem; line-height: 1.25; }
  h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
  h3 { font-size: 1rem; margin: 0 0 .5rem; word-break: break-word; }
  p { margin: 0 0 1rem; }
  a { color: var(--accent); }
  .top { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; gap: .5rem 1rem; margin-bottom: 1.5rem; }
  .brand { font-weight: 700; letter-spacing: .04em; color: var(--accent); }
  .languages { display: flex; flex-wrap: wrap; gap: .25rem; margin: 0; padding: 0; list-style: none; font-size: .85rem; }
  .languages a, .languages span { display: inline-block; padding: .15rem .5rem; border-radius: 6px; border: 1px solid var(--control-border);
         background: transparent; color: var(--fg); font: inherit; text-decoration: none; cursor: pointer; }
  .languages [aria-current="true"] { background: var(--subtle); font-weight: 600; cursor: default; }
  .muted { color: var(--muted); font-size: .9rem; }
  .lead { font-size: 1.02rem; }
  .lead strong, .client { word-break: break-word; }
  code { font-size: .85rem; overflow-wrap: anywhere; }
  pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--subtle); color: var(--fg); padding: .75rem; border-radius: 6px;
        border: 1px solid var(--border); }
  .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .8rem; }
  .footnote { margin: 1.25rem 0 0; }
  :focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }

  /* Forms */
  form { margin: 0; }
  .field { margin: 0 0 1rem; }
  label { display: block; font-weight: 600; font-size: .95rem; margin-bottom: .35rem; }
  .hint { display: block; color: var(--muted); font-size: .85rem; margin-top: .3rem; }
  input[type="text"], input[type="password"], input[type="email"], textarea {
    display: block; width: 100%; padding: .6rem .75rem; font: inherit; color: var(--fg); background: var(--field);
    border: 1px solid var(--control-border); border-radius: 8px; transition: border-color .15s, box-shadow .15s; }
  textarea[readonly] { background: var(--subtle); }
  /* The text to sign is shown whole, however the screen wraps it. */
  textarea.challenge { field-sizing: content; resize: none; }
  textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .8rem; resize: vertical; }
  input[type="text"]:focus, input[type="password"]:focus, input[type="email"]:focus, textarea:focus {
    outline: none; border-color: var(--focus); box-shadow: 0 0 0 3px color-mix(in srgb, var(--focus) 35%, transparent); }
  input[aria-invalid="true"], textarea[aria-invalid="true"],
  input[aria-invalid="true"]:focus, textarea[aria-invalid="true"]:focus { border-color: var(--danger); border-width: 2px; }
  input.otp { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 1.35rem; letter-spacing: .35em; max-width: 12rem; }

  /* Buttons */
  .actions { display: flex; flex-wrap: wrap; gap: .75rem; margin-top: 1.5rem; }
  .actions > .button { flex: 1 1 8rem; }
  .button { display: inline-block; padding: .65rem 1.1rem; font: inherit; font-weight: 600; text-align: center; text-decoration: none;
            border-radius: 8px; border: 1px solid transparent; cursor: pointer; }
  .button.primary { background: var(--accent); color: var(--accent-fg); }
  .button.primary:hover { background: var(--accent-hover); }
  .button.secondary { background: transparent; color: var(--fg); border-color: var(--control-border); }
  .button.secondary:hover { background: var(--subtle); }
  .button:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
  /* A button a script holds while it works (a passkey prompt, the mock card signing) looks held, and stays so under the pointer. */
  .button:disabled { opacity: .55; cursor: progress; }
  .button.primary:disabled:hover { background: var(--accent); }
  .button.secondary:disabled:hover { background: transparent; }
  /* Cancelling is the page's other way out: after its main form, never pressed by Enter there. */
  form.cancel { margin-top: 1rem; }
  form.cancel .button { width: 100%; }
  .copy { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem; margin-top: .5rem; }
  .copy .button { padding: .35rem .8rem; font-size: .9rem; }
  .copy .hint { margin: 0; }

  /* Signing with a phone: the QR code on a computer, the app link on the phone itself (the page cannot know which it is on). */
  .phone-sign { border: 1px solid var(--border); border-radius: 8px; padding: 1rem; margin: 0 0 1.5rem; }
  .phone-sign h2 { margin-top: 0; }
  .qr { display: block; width: 13rem; max-width: 100%; margin: 0 auto 1rem; background: #ffffff; padding: .5rem; border-radius: 6px; }
  .qr svg { display: block; width: 100%; height: auto; }
  .binding-code { display: block; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 1.6rem; font-weight: 700;
                  letter-spacing: .3em; margin: .1rem 0; }
  .on-phone { display: none; }
  .hint.warning { color: var(--warn); font-weight: 600; }
  @media (max-width: 40rem) { .on-computer { display: none; } .on-phone { display: block; } }

  /* Passkeys: another way below a page's form, after a rule that says "or". */
  .divider { display: flex; align-items: center; gap: .75rem; margin: 1.5rem 0 0; color: var(--muted); font-size: .9rem; }
  .divider::before, .divider::after { content: ""; flex: 1; border-top: 1px solid var(--border); }
  section.passkey .actions { margin-top: 1rem; }
  section.passkey .actions > .button { flex-basis: 100%; }
  #passkeys th .muted { font-size: .8rem; }
  #passkeys .dates { display: block; font-size: .8rem; }
  #passkeys .button { padding: .35rem .7rem; font-size: .9rem; white-space: nowrap; }
  #passkeys td:last-child { width: 1%; overflow-wrap: normal; }

  /* Messages */
  .alert, .notice, .mock { border: 1px solid; border-radius: 8px; padding: .7rem .9rem; margin: 0 0 1rem; font-size: .95rem; }
  .alert { color: var(--danger); background: var(--danger-bg); border-color: var(--danger-border); }
  .notice { color: var(--info); background: var(--info-bg); border-color: var(--info-border); }
  .mock { color: var(--warn); background: var(--warn-bg); border-color: var(--warn-border); border-style: dashed; }
  .alert p, .notice p, .mock p { margin: 0; }

  /* Lists and definition lists */
  ul.plain { list-style: none; padding: 0; margin: 0 0 1rem; }
  ul.scopes li { position: relative; padding: .45rem 0 .45rem 1.6rem; border-bottom: 1px solid var(--border); }
  ul.scopes li:last-child { border-bottom: 0; }
  ul.scopes li::before { content: "\\2713"; position: absolute; left: .2rem; color: var(--ok); font-weight: 700; }
  ul.reasons { margin: 0 0 1rem; padding-left: 1.25rem; }
  .detail { border: 1px solid var(--border); border-radius: 8px; padding: .8rem .9rem; margin: 0 0 .75rem; background: var(--subtle); }
  dl { margin: 0; }
  dl.members > dt { font-weight: 600; font-size: .85rem; color: var(--muted); margin-top: .5rem; word-break: break-word; }
  dl.members > dd { margin: .1rem 0 0; word-break: break-word; }
  dl.members dl.members { border-left: 2px solid var(--border); padding-left: .6rem; }
  dd ul { margin: 0; padding-left: 1.15rem; }
  ul.kv { margin: .5rem 0 0; word-break: break-word; }
  ul.kv li { padding: .1rem 0; }
  ul.kv ul { margin: .2rem 0 .2rem; padding-left: 1.15rem; }
  ul.kv ul.kv { padding-left: .6rem; border-left: 2px solid var(--border); }
  .key { font-weight: 600; }

  /* Tables */
  table { width: 100%; border-collapse: collapse; margin: 0 0 1rem; font-size: .95rem; }
  caption { text-align: left; font-weight: 600; margin-bottom: .4rem; }
  th, td { text-align: left; vertical-align: top; padding: .5rem .4rem; border-bottom: 1px solid var(--border); }
  th { width: 40%; font-weight: 600; }
  td { overflow-wrap: anywhere; }
  th .muted { display: block; font-weight: 400; }
  th .muted code { font-size: .8rem; }
  #links th { width: auto; }
  #links .state { display: block; font-weight: 600; }
  #links .dates { display: block; font-size: .8rem; }
  #links .button { padding: .35rem .7rem; font-size: .9rem; white-space: nowrap; }
  #links td:last-child { width: 1%; overflow-wrap: normal; }
`;

/**
 * How a page offers the other languages: links to the same page in another
 * language (an interaction's page keeps its interaction through the link).
 * Never a button of the page's form: a form's first submit button is what
 * Enter in any of its fields presses, and that must be the page's own action.
 */
export interface LanguageSwitch {
  href: (locale: Locale) => string;
}

/** The language a page is rendered in and its messages. */
export interface PageLanguage {
  locale: Locale;
  t: Messages;
  /** The IANA time zone the page shows times in (SHOMEI_TIME_ZONE). */
  timeZone: string;
  languageSwitch?: LanguageSwitch | undefined;
}

function languageSwitch(lang: PageLanguage): Html | "" {
  const s = lang.languageSwitch;
  if (!s) return "";
  const item = (locale: Locale) =>
    locale === lang.locale
      ? html`<li><span aria-current="true" lang="${locale}">${localeNames[locale]}</span></li>`
      : html`<li><a href="${s.href(locale)}" lang="${locale}" hreflang="${locale}">${localeNames[locale]}</a></li>`;
  return html`<nav aria-label="${lang.t.common.languageSwitch}"><ul class="languages">${locales.map(item)}</ul></nav>`;
}

/** The pages' icon, served by routes/assets.ts (CSP img-src 'self'). */
export const faviconPath = "/favicon.svg";

/**
 * The frame every server-rendered page shares. `scripts`: same-origin script
 * paths, for the few pages whose CSP allows them (see page-headers.ts).
 */
export function page(lang: PageLanguage, title: string, body: Html, scripts: readonly string[] = []): string {
  return html`<!doctype html>
<html lang="${lang.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · shomei</title>
<link rel="icon" href="${faviconPath}" type="image/svg+xml">
<style>${new Html(styles)}</style>
${scripts.map((src) => html`<script src="${src}" defer></script>`)}
</head>
<body><main><div class="top"><div class="brand">shomei</div>${languageSwitch(lang)}</div>${body}</main></body>
</html>`.value;
}

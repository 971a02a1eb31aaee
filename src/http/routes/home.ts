import type { Router } from "express";
import type { Config } from "../../config/schema.ts";
import type { Oidc } from "../../domain/oidc/provider.ts";
import { cookieNames, readCookie } from "../cookies.ts";
import { linkPageLanguage } from "../i18n/page-language.ts";
import { html } from "../pages/html.ts";
import { page } from "../pages/layout.ts";
import { version } from "../../version.ts";

/**
 * A landing page so that opening the base URL in a browser shows what runs
 * there, and, for a signed-in person, who is signed in, their certificates
 * page and signing out.
 */
export function registerHomeRoute(router: Router, config: Config, oidc: Pick<Oidc, "flow" | "issuer" | "users">): void {
  const cookies = cookieNames(oidc.issuer);
  router.get("/", async (req, res) => {
    const info = { name: "shomei", version, mode: config.mode, issuer: config.baseUrl };
    if (req.accepts(["json", "html"]) !== "html") {
      res.json(info);
      return;
    }
    // The language follows Accept-Language and the remembered language, the page the session: one copy per both.
    res.vary("Accept-Language").vary("Cookie").set("Cache-Control", "no-store");
    const lang = linkPageLanguage(req, config.defaultLocale);
    const t = lang.t.home;
    const current = await oidc.flow.session(readCookie(req, cookies.session));
    const user = current ? await oidc.users.find(current.userId) : undefined;
    const query = `?ui_locales=${lang.locale}`;
    res.type("html").send(
      page(
        lang,
        t.title,
        html`<h1>shomei ${version}</h1>
<p>${t.running(config.mode)}</p>
<h2>${t.account}</h2>
${
  user
    ? html`<p class="muted">${lang.t.common.signedInAs(user.login)}</p>
<ul id="account-links"><li><a href="/account/jpki${query}">${t.certificates}</a></li><li><a href="/account/security${query}">${lang.t.passkeys.manage}</a></li><li><a href="/auth/logout${query}">${t.signOut}</a></li></ul>`
    : html`<p>${t.signedOut}</p>
<ul id="account-links"><li><a href="/account/jpki${query}">${t.certificates}</a></li><li><a href="/account/security${query}">${lang.t.passkeys.manage}</a></li></ul>`
}
<p class="muted">${t.operations}${lang.t.common.colon}<a href="/healthz">/healthz</a> · <a href="/readyz">/readyz</a> · <a href="/metrics">/metrics</a></p>`,
      ),
    );
  });
}

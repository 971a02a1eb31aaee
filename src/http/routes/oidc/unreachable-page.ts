import express, { type Request, type Response, type Router } from "express";
import type { LoadedInteraction } from "../../../domain/oidc/flow/authorization-flow.ts";
import { csrfToken } from "../../../domain/oidc/flow/secrets.ts";
import { whyOutOfReach } from "../../../domain/oidc/jpki/out-of-reach.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { cookieNames, readCookie } from "../../cookies.ts";
import { pageHeaders } from "../../middleware/page-headers.ts";
import { renderUnreachablePage } from "../../pages/unreachable.ts";
import { requireFormCsrf } from "./form-csrf.ts";
import type { JpkiPageLanguages } from "./jpki-pages.ts";
import { sendStep } from "./steps.ts";

const form = express.urlencoded({ extended: false, limit: 16 * 1024, parameterLimit: 20 });

/**
 * /auth/unreachable: the level the application asked for is out of the
 * signed-in user's reach (a revoked card, say). GET decides again (so after
 * linking a new certificate it leads on to the step-up page) and otherwise
 * shows why; its one form returns to the application with the error.
 */
export function registerUnreachablePage(router: Router, oidc: Pick<Oidc, "flow" | "issuer" | "jpki" | "secretKey">, languages: Pick<JpkiPageLanguages, "load" | "ofInteraction" | "switchLanguage">): void {
  const cookies = cookieNames(oidc.issuer);
  const browser = (req: Request) => readCookie(req, cookies.browser) ?? "";
  const session = (req: Request) => readCookie(req, cookies.session);
  const here = (interaction: LoadedInteraction) => `/auth/unreachable?interaction=${encodeURIComponent(interaction.id)}`;

  async function view(req: Request, res: Response, interaction: LoadedInteraction): Promise<void> {
    const step = await oidc.flow.advance(interaction.id, browser(req), session(req));
    if (step.kind !== "page" || step.page !== "unreachable" || !interaction.user) return sendStep(res, step);
    const lang = languages.ofInteraction(req, res, interaction);
    const { acr, certificateMethod } = oidc.flow.unreachableLevel(interaction);
    const why = whyOutOfReach(await oidc.jpki.linksOf(interaction.user.id), certificateMethod, Date.now());
    res.type("html").send(
      renderUnreachablePage(lang, {
        action: here(interaction),
        csrfToken: csrfToken(oidc.secretKey, interaction.id),
        clientName: interaction.client.name,
        userLogin: interaction.user.login,
        requiredAcr: acr,
        why,
        linkCertificate: why === "no_method" ? undefined : `/account/jpki?ui_locales=${lang.locale}`,
        tryAgain: here(interaction),
      }),
    );
  }

  router.get("/auth/unreachable", pageHeaders, async (req, res) => {
    const interaction = await languages.load(req, res);
    await languages.switchLanguage(interaction, req.query.ui_locales);
    await view(req, res, interaction);
  });

  router.post("/auth/unreachable", pageHeaders, form, async (req, res) => {
    const interaction = await languages.load(req, res);
    requireFormCsrf(oidc.secretKey, interaction.id, req);
    sendStep(res, await oidc.flow.returnUnreachable(interaction.id, browser(req), session(req)));
  });
}

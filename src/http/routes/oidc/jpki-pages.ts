import express, { type Request, type Response, type Router } from "express";
import type { LoadedInteraction } from "../../../domain/oidc/flow/authorization-flow.ts";
import { csrfToken } from "../../../domain/oidc/flow/secrets.ts";
import { challengeText } from "../../../domain/oidc/jpki/challenges.ts";
import { JpkiError } from "../../../domain/oidc/jpki/jpki-error.ts";
import { notLinkedToAnyone } from "../../../domain/oidc/jpki/jpki-sign-in.ts";
import type { SignedChallengeForm } from "../../../domain/oidc/jpki/signed-challenge.ts";
import type { AuthMethod } from "../../../domain/oidc/acr.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { demoLogin } from "../../../domain/mock/demo-names.ts";
import { cookieNames, readCookie, setCookie } from "../../cookies.ts";
import { contentSecurityPolicy, pageHeaders, withMockCardScript } from "../../middleware/page-headers.ts";
import { renderJpkiLinkPage, renderJpkiSignInFirstPage } from "../../pages/jpki-link.ts";
import { mockCardScriptPath, renderJpkiSignInPage, renderJpkiStepUpPage, type MockCardView } from "../../pages/jpki-sign.ts";
import { switchLocaleField, type PageLanguage } from "../../pages/layout.ts";
import { mockCardScript } from "../../pages/mock-card-script.ts";
import { requireFormCsrf } from "./form-csrf.ts";
import { sendStep } from "./steps.ts";

/** A PEM certificate and a signature, URL-encoded, with room to spare. */
export const jpkiForm = express.urlencoded({ extended: false, limit: 64 * 1024, parameterLimit: 20 });

export function isJpkiMethod(method: AuthMethod): boolean {
  return method === "jpki_sig" || method === "jpki_auth";
}

/** The signed challenge as the form carries it; missing fields are empty (the domain says what is wrong). */
function signedChallengeOf(req: Request): SignedChallengeForm {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof body[name] === "string" ? (body[name] as string) : "");
  return { challenge: text("challenge").trim(), certificate: text("certificate"), signature: text("signature") };
}

export interface StepUpRequirement {
  acr: string;
  methods: readonly AuthMethod[];
  reasons: string[];
}

/** How the JPKI pages choose their language: as the other interaction pages do, or by the page's own address. */
export interface JpkiPageLanguages {
  /** The interaction the request names, in this browser, its language left for an error page of the request. */
  load(req: Request, res: Response): Promise<LoadedInteraction>;
  /** An interaction's page, whose language switch submits the form `formId`. */
  ofInteraction(req: Request, res: Response, interaction: LoadedInteraction, formId: string): PageLanguage;
  /** A page outside any interaction (linking certificates): ui_locales in its address, then the browser's. */
  ofPage(req: Request): PageLanguage;
  /** Remembers a switch of language for the interaction; true when the request was one. */
  switchLanguage(interaction: LoadedInteraction, requested: unknown): Promise<boolean>;
}

/** The id of the form every JPKI page has (the language switch submits it). */
const jpkiFormId = "jpki-form";

/**
 * The JPKI pages: step-up with the card (a variant of /auth/reauth, which
 * calls in here), sign-in with the card (/auth/login/jpki), linking a
 * certificate (/account/jpki) and, in mock mode, the mock card's script.
 */
export function createJpkiPages(oidc: Oidc, mockMode: boolean, languages: JpkiPageLanguages) {
  const cookies = cookieNames(oidc.issuer);
  const browser = (req: Request) => readCookie(req, cookies.browser) ?? "";

  async function mockCardOf(userId: string | undefined): Promise<MockCardView | undefined> {
    if (!mockMode || !oidc.mockCards || !userId) return undefined;
    return oidc.mockCards.find(userId);
  }

  /** The page's CSP: scripts from this origin only when the mock card's script is on it. */
  function send(res: Response, status: number, body: string, mockCard: MockCardView | undefined): void {
    if (mockCard) res.set("Content-Security-Policy", withMockCardScript(String(res.get("Content-Security-Policy") ?? contentSecurityPolicy)));
    res.status(status).type("html").send(body);
  }

  /** The refusal in the page's language; the domain's English message is for logs and tests. */
  const errorOf = (lang: PageLanguage, error: JpkiError) => ({ code: error.code, message: lang.t.jpki.refusals[error.wording] });

  async function stepUpView(
    req: Request,
    res: Response,
    interaction: LoadedInteraction,
    requirement: StepUpRequirement,
    status: number,
    error?: JpkiError,
  ): Promise<void> {
    const user = interaction.user!;
    const lang = languages.ofInteraction(req, res, interaction, jpkiFormId);
    const challenge = await oidc.jpki.challenges.issue({ interactionId: interaction.id });
    const mockCard = await mockCardOf(user.id);
    send(
      res,
      status,
      renderJpkiStepUpPage(lang, {
        action: `/auth/reauth?interaction=${encodeURIComponent(interaction.id)}`,
        csrfToken: csrfToken(oidc.secretKey, interaction.id),
        challenge,
        challengeText: challengeText(challenge),
        submit: "submit",
        clientName: interaction.client.name,
        userLogin: user.login,
        requiredAcr: requirement.acr,
        needsSignatureCertificate: requirement.methods.includes("jpki_sig"),
        reasons: requirement.reasons,
        error: error && errorOf(lang, error),
        mockCard,
      }),
      mockCard,
    );
  }

  /** A signed challenge on the step-up page: the session is renewed with the card's methods, or the page says why not. */
  async function stepUpSubmit(req: Request, res: Response, interaction: LoadedInteraction, requirement: StepUpRequirement, sessionId: string) {
    try {
      const proof = await oidc.jpki.prove({ interactionId: interaction.id }, signedChallengeOf(req), {
        userId: interaction.user!.id,
        methods: requirement.methods,
      });
      sendStep(req, res, await oidc.flow.reauthenticated(interaction, sessionId, proof.amr, browser(req)));
    } catch (error) {
      if (!(error instanceof JpkiError)) throw error;
      // A card found revoked may have been the only way to the level: then the flow says why, not this form again.
      if (!(await oidc.flow.reauthRequirement(interaction, sessionId))) return sendStep(req, res, await oidc.flow.advance(interaction.id, browser(req), sessionId));
      await stepUpView(req, res, interaction, requirement, error.status, error);
    }
  }

  function register(router: Router): void {
    if (mockMode) {
      router.get(mockCardScriptPath, (_req, res) => {
        res.set("Cache-Control", "no-cache").type("text/javascript").send(mockCardScript);
      });
    }


    async function signInView(req: Request, res: Response, interaction: LoadedInteraction, status: number, error?: JpkiError) {
      const lang = languages.ofInteraction(req, res, interaction, jpkiFormId);
      const challenge = await oidc.jpki.challenges.issue({ interactionId: interaction.id });
      // Mock mode: the card of the demo user, the one person whose card the mock environment holds.
      const mockCard = await mockCardOf(mockMode ? (await oidc.users.findByLogin(demoLogin))?.id : undefined);
      send(
        res,
        status,
        renderJpkiSignInPage(lang, {
          action: `/auth/login/jpki?interaction=${encodeURIComponent(interaction.id)}`,
          csrfToken: csrfToken(oidc.secretKey, interaction.id),
          challenge,
          challengeText: challengeText(challenge),
          submit: "submit",
          clientName: interaction.client.name,
          error: error && errorOf(lang, error),
          mockCard,
        }),
        mockCard,
      );
    }

    router.get("/auth/login/jpki", pageHeaders, async (req, res) => {
      const interaction = await languages.load(req, res);
      await languages.switchLanguage(interaction, req.query.ui_locales);
      await signInView(req, res, interaction, 200);
    });

    router.post("/auth/login/jpki", pageHeaders, jpkiForm, async (req, res) => {
      const interaction = await languages.load(req, res);
      requireFormCsrf(oidc.secretKey, interaction.id, req);
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (await languages.switchLanguage(interaction, body[switchLocaleField])) return signInView(req, res, interaction, 200);
      try {
        const proof = await oidc.jpki.prove({ interactionId: interaction.id }, signedChallengeOf(req));
        const user = await oidc.users.find(proof.userId);
        if (!user) throw notLinkedToAnyone();
        const { sessionId, step } = await oidc.flow.login(interaction, user, browser(req), proof.amr);
        setCookie(res, cookies, cookies.session, sessionId, oidc.sessionLifetimeSeconds);
        sendStep(req, res, step);
      } catch (error) {
        if (!(error instanceof JpkiError)) throw error;
        await signInView(req, res, interaction, error.status, error);
      }
    });

    const session = (req: Request) => readCookie(req, cookies.session);

    async function linkView(
      req: Request,
      res: Response,
      sessionId: string,
      userId: string,
      status: number,
      extra: { error?: JpkiError; linked?: boolean } = {},
    ) {
      const lang = languages.ofPage(req);
      const user = await oidc.users.find(userId);
      if (!user) return send(res, 401, renderJpkiSignInFirstPage(lang), undefined);
      const now = Date.now();
      const links = (await oidc.jpki.linksOf(userId)).map((l) => ({
        type: l.type,
        linkedAt: l.linkedAt,
        state: l.status === "revoked" ? ("revoked" as const) : l.notAfter <= now ? ("expired" as const) : ("good" as const),
      }));
      const challenge = await oidc.jpki.challenges.issue({ sessionId });
      const mockCard = await mockCardOf(userId);
      send(
        res,
        status,
        renderJpkiLinkPage(lang, {
          // The language the page is in stays after the form is sent.
          action: `/account/jpki?ui_locales=${lang.locale}`,
          csrfToken: csrfToken(oidc.secretKey, linkCsrfSubject(sessionId)),
          challenge,
          challengeText: challengeText(challenge),
          submit: "linkSubmit",
          userLogin: user.login,
          links,
          notice: extra.linked ? lang.t.jpki.linked : undefined,
          error: extra.error && errorOf(lang, extra.error),
          mockCard,
        }),
        mockCard,
      );
    }

    router.get("/account/jpki", pageHeaders, async (req, res) => {
      const sessionId = session(req);
      const current = await oidc.flow.session(sessionId);
      if (!sessionId || !current) return send(res, 401, renderJpkiSignInFirstPage(languages.ofPage(req)), undefined);
      await linkView(req, res, sessionId, current.userId, 200);
    });

    router.post("/account/jpki", pageHeaders, jpkiForm, async (req, res) => {
      const sessionId = session(req);
      const current = await oidc.flow.session(sessionId);
      if (!sessionId || !current) return send(res, 401, renderJpkiSignInFirstPage(languages.ofPage(req)), undefined);
      requireFormCsrf(oidc.secretKey, linkCsrfSubject(sessionId), req);
      try {
        await oidc.jpki.link({ sessionId }, signedChallengeOf(req), current.userId);
        await linkView(req, res, sessionId, current.userId, 200, { linked: true });
      } catch (error) {
        if (!(error instanceof JpkiError)) throw error;
        await linkView(req, res, sessionId, current.userId, error.status, { error });
      }
    });
  }

  return { stepUpView, stepUpSubmit, register };
}

/** The linking form's CSRF token is bound to the session (there is no interaction). */
function linkCsrfSubject(sessionId: string): string {
  return `jpki-link:${sessionId}`;
}

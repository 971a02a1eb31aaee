import express, { type Request, type Response, type Router } from "express";
import type { LoadedInteraction } from "../../../domain/oidc/flow/authorization-flow.ts";
import { csrfToken } from "../../../domain/oidc/flow/secrets.ts";
import { challengeText } from "../../../domain/oidc/jpki/challenges.ts";
import { isDueForRenewal } from "../../../domain/oidc/jpki/renewal.ts";
import { JpkiError } from "../../../domain/oidc/jpki/jpki-error.ts";
import { notLinkedToAnyone } from "../../../domain/oidc/jpki/jpki-sign-in.ts";
import type { SignedChallengeForm } from "../../../domain/oidc/jpki/signed-challenge.ts";
import type { AuthMethod } from "../../../domain/oidc/acr.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { cookieNames, readCookie, setCookie } from "../../cookies.ts";
import { contentSecurityPolicy, pageHeaders, withPageScripts } from "../../middleware/page-headers.ts";
import { renderJpkiLinkPage, renderJpkiSignInFirstPage } from "../../pages/jpki-link.ts";
import { copyScript } from "../../pages/copy-script.ts";
import { copyScriptPath, renderJpkiSignInPage, renderJpkiStepUpPage } from "../../pages/jpki-sign.ts";
import type { PageLanguage } from "../../pages/layout.ts";
import type { PageHints } from "../../page-hints.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import type { ChallengeBinding } from "../../../domain/oidc/jpki/challenges.ts";
import type { CreatedSignRequest, SignRequestCertificateKind, SignRequestPurpose } from "../../../domain/oidc/jpki/sign-requests.ts";
import { html, type Html } from "../../pages/html.ts";
import { basicInfoConsentSection, phoneSignSection, signRequestScript, signRequestScriptPath } from "../../pages/jpki-phone.ts";
import { qrCodeSvg } from "../../pages/qr-code.ts";
import { appLinkOf, signRequestUrl } from "../jpki-app-api.ts";
import { accountLoginPath } from "./account-login.ts";
import { browserId } from "./authorize.ts";
import { requireFormCsrf } from "./form-csrf.ts";
import { sendStep } from "./steps.ts";

/** The remove button's form: its CSRF token and a certificate id. */
const removeForm = express.urlencoded({ extended: false, limit: 4 * 1024, parameterLimit: 5 });

/** A PEM certificate and a signature, URL-encoded, with room to spare. */
export const jpkiForm = express.urlencoded({ extended: false, limit: 64 * 1024, parameterLimit: 20 });

export function isJpkiMethod(method: AuthMethod): boolean {
  return method === "jpki_sig" || method === "jpki_auth";
}

/** Where the waiting page asks how its request is doing (this browser only). */
const progressPath = (id: string) => `/auth/jpki/sign-requests/${encodeURIComponent(id)}`;

/** What a page needs signed by a phone: the request to make, and where the continue button posts. */
interface PhoneRequest {
  purpose: SignRequestPurpose;
  binding: ChallengeBinding;
  certificateKind: SignRequestCertificateKind;
  /** Who the phone app says the signature is for: the application, or this service on its own account pages. */
  clientName: string;
  action: string;
  csrfToken: string;
}

/** How the phone section of a page comes about: agreed to the 基本4情報 just now, or the same request shown again. */
interface PhoneOptions {
  basicInfoConsentAt?: number | undefined;
  reshow?: string | undefined;
}

/** A continue button's request id, when the form is the phone's rather than a pasted signature. */
function signRequestOf(req: Request): string | undefined {
  const value = ((req.body ?? {}) as Record<string, unknown>).sign_request;
  return typeof value === "string" ? value : undefined;
}

/** The person agreed, on the 基本4情報 notice, that the signature certificate may be asked for. */
function agreedToBasicInfo(req: Request): boolean {
  return ((req.body ?? {}) as Record<string, unknown>).basic_info_consent === "agree";
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
  /** An interaction's page, whose language switch links to the same page of the interaction. */
  ofInteraction(req: Request, res: Response, interaction: LoadedInteraction): PageLanguage;
  /** A page outside any interaction (linking certificates): ui_locales in its address, then the browser's. */
  ofPage(req: Request): PageLanguage;
  /** Remembers a switch of language for the interaction; true when the request was one. */
  switchLanguage(interaction: LoadedInteraction, requested: unknown): Promise<boolean>;
}

/**
 * The JPKI pages: step-up with the card (a variant of /auth/reauth, which
 * calls in here), sign-in with the card (/auth/login/jpki), linking a
 * certificate (/account/jpki); each form with what the hints add (the mock card in mock mode).
 */
/** What the JPKI pages use of the provider. */
export type JpkiPageServices = Pick<Oidc, "flow" | "issuer" | "jpki" | "secretKey" | "sessionLifetimeSeconds" | "signRequests" | "users">;

export function createJpkiPages(oidc: JpkiPageServices, hints: PageHints, languages: JpkiPageLanguages) {
  const cookies = cookieNames(oidc.issuer);
  const browser = (req: Request) => readCookie(req, cookies.browser) ?? "";

  /** A JPKI page with its form: scripts from this origin (the copy button's, a hint's), on top of the page's policy. */
  function send(res: Response, status: number, body: string, withForm = true): void {
    if (withForm) res.set("Content-Security-Policy", withPageScripts(String(res.get("Content-Security-Policy") ?? contentSecurityPolicy)));
    res.status(status).type("html").send(body);
  }

  /**
   * The phone's way for a page: a new signing request (or the same one again,
   * when continue was pressed too early) with its QR code, app link and
   * binding code; for a signature certificate, first the 基本4情報 notice,
   * whose button agrees and comes back here with the consent.
   */
  async function phoneFor(req: Request, res: Response, lang: PageLanguage, p: PhoneRequest, options: PhoneOptions = {}): Promise<Html> {
    const browserIdValue = browserId(req, res, cookies);
    let shown: CreatedSignRequest | undefined = options.reshow === undefined ? undefined : await oidc.signRequests.reshow(options.reshow, browserIdValue);
    if (!shown) {
      if (p.certificateKind === "signature" && options.basicInfoConsentAt === undefined) {
        // Linking a card on the account's own pages serves no application: the notice names none.
        return basicInfoConsentSection(lang, { clientName: p.purpose === "link" ? undefined : p.clientName, action: p.action, csrfToken: p.csrfToken });
      }
      shown = await oidc.signRequests.create({ ...p, browserId: browserIdValue, basicInfoConsentAt: options.basicInfoConsentAt });
    }
    const requestUrl = signRequestUrl(oidc.issuer, shown.id);
    return phoneSignSection(lang, {
      requestUrl,
      appLink: appLinkOf(requestUrl),
      qrCode: await qrCodeSvg(requestUrl, lang.t.jpki.phone.qrLabel),
      bindingCode: shown.bindingCode,
      certificateKind: shown.certificateKind,
      expiresAt: shown.expiresAt,
      requestId: shown.id,
      progressUrl: progressPath(shown.id),
      action: p.action,
      csrfToken: p.csrfToken,
    });
  }

  /**
   * What was signed: the phone's answer taken from its request (once, by
   * this browser) or the pasted form; either is then checked the same way.
   */
  async function signedChallenge(req: Request): Promise<{ form: SignedChallengeForm; basicInfoConsentAt?: number | undefined; fromPhone: boolean }> {
    const requestId = signRequestOf(req);
    if (requestId === undefined) return { form: signedChallengeOf(req), fromPhone: false };
    return { ...(await oidc.signRequests.take(requestId, browser(req))), fromPhone: true };
  }

  /** After a refusal: the same request again while it waits for its app, else a new one. */
  const phoneOptionsAfter = (req: Request, error: JpkiError | undefined): PhoneOptions =>
    error?.code === "sign_request_pending" ? { reshow: signRequestOf(req) } : {};

  /** The refusal in the page's language; the domain's English message is for logs and tests. */
  const errorOf = (lang: PageLanguage, error: JpkiError) => ({ code: error.code, message: lang.t.jpki.refusals[error.wording] });

  async function stepUpView(
    req: Request,
    res: Response,
    interaction: LoadedInteraction,
    requirement: StepUpRequirement,
    status: number,
    error?: JpkiError,
    phoneOptions: PhoneOptions = {},
  ): Promise<void> {
    const user = interaction.user!;
    const lang = languages.ofInteraction(req, res, interaction);
    const challenge = await oidc.jpki.challenges.issue({ interactionId: interaction.id });
    const hint = await hints.jpkiForm?.(lang, { signer: user.id, challengeText: challengeText(challenge) });
    const action = `/auth/reauth?interaction=${encodeURIComponent(interaction.id)}`;
    const csrf = csrfToken(oidc.secretKey, interaction.id);
    // Only a signature certificate reaches the level: the app is asked for it (and the 基本4情報 notice comes first).
    const signatureOnly = !requirement.methods.includes("jpki_auth");
    const phone = await phoneFor(
      req,
      res,
      lang,
      {
        purpose: "step_up",
        binding: { interactionId: interaction.id },
        certificateKind: signatureOnly ? "signature" : "user_authentication",
        clientName: interaction.client.name,
        action,
        csrfToken: csrf,
      },
      phoneOptions,
    );
    send(
      res,
      status,
      renderJpkiStepUpPage(lang, {
        action,
        cancelAction: `/auth/cancel?interaction=${encodeURIComponent(interaction.id)}`,
        csrfToken: csrf,
        challenge,
        challengeText: challengeText(challenge),
        submit: "submit",
        clientName: interaction.client.name,
        userLogin: user.login,
        requiredAcr: requirement.acr,
        needsSignatureCertificate: requirement.methods.includes("jpki_sig"),
        reasons: requirement.reasons,
        error: error && errorOf(lang, error),
        errorFromPhone: signRequestOf(req) !== undefined,
        certificate: keptCertificate(req, error),
        hint,
        phone,
      }),
    );
  }

  /** A signed challenge on the step-up page: the session is renewed with the card's methods, or the page says why not. */
  async function stepUpSubmit(req: Request, res: Response, interaction: LoadedInteraction, requirement: StepUpRequirement, sessionId: string) {
    if (agreedToBasicInfo(req)) return stepUpView(req, res, interaction, requirement, 200, undefined, { basicInfoConsentAt: Date.now() });
    try {
      const signed = await signedChallenge(req);
      const proof = await oidc.jpki.prove({ interactionId: interaction.id }, signed.form, {
        userId: interaction.user!.id,
        methods: requirement.methods,
      });
      sendStep(res, await oidc.flow.reauthenticated(interaction, sessionId, proof.amr, browser(req), signed.basicInfoConsentAt));
    } catch (error) {
      if (!(error instanceof JpkiError)) throw error;
      // A card found revoked may have been the only way to the level: then the flow says why, not this form again.
      if (!(await oidc.flow.reauthRequirement(interaction, sessionId))) return sendStep(res, await oidc.flow.advance(interaction.id, browser(req), sessionId));
      await stepUpView(req, res, interaction, requirement, error.status, error, phoneOptionsAfter(req, error));
    }
  }

  function register(router: Router): void {
    router.get(copyScriptPath, (_req, res) => {
      res.set("Cache-Control", "no-cache").type("text/javascript").send(copyScript);
    });
    router.get(signRequestScriptPath, (_req, res) => {
      res.set("Cache-Control", "no-cache").type("text/javascript").send(signRequestScript);
    });
    // The waiting page's question: how its request is doing. Another browser's request answers 403, an unknown one 404.
    router.get("/auth/jpki/sign-requests/:id", pageHeaders, async (req, res) => {
      try {
        const progress = await oidc.signRequests.progress(typeof req.params.id === "string" ? req.params.id : "", browser(req));
        res.json({ state: progress.state, ...(progress.pinAttemptsRemaining === undefined ? {} : { pin_attempts_remaining: progress.pinAttemptsRemaining }) });
      } catch (error) {
        if (!(error instanceof JpkiError)) throw error;
        res.status(error.wording === "sign_request_other_browser" ? 403 : 404).json({ error: error.wording });
      }
    });

    async function signInView(req: Request, res: Response, interaction: LoadedInteraction, status: number, error?: JpkiError) {
      const lang = languages.ofInteraction(req, res, interaction);
      const challenge = await oidc.jpki.challenges.issue({ interactionId: interaction.id });
      const hint = await hints.jpkiForm?.(lang, { signer: undefined, challengeText: challengeText(challenge) });
      const action = `/auth/login/jpki?interaction=${encodeURIComponent(interaction.id)}`;
      const csrf = csrfToken(oidc.secretKey, interaction.id);
      // Sign-in is at the user authentication certificate's level (a signature certificate, linked, would do too).
      const phone = await phoneFor(
        req,
        res,
        lang,
        {
          purpose: "sign_in",
          binding: { interactionId: interaction.id },
          certificateKind: "user_authentication",
          clientName: interaction.client.name,
          action,
          csrfToken: csrf,
        },
        phoneOptionsAfter(req, error),
      );
      send(
        res,
        status,
        renderJpkiSignInPage(lang, {
          action,
          cancelAction: `/auth/cancel?interaction=${encodeURIComponent(interaction.id)}`,
          passwordSignIn: `/auth/login?interaction=${encodeURIComponent(interaction.id)}`,
          csrfToken: csrf,
          challenge,
          challengeText: challengeText(challenge),
          submit: "submit",
          clientName: interaction.client.name,
          error: error && errorOf(lang, error),
          errorFromPhone: signRequestOf(req) !== undefined,
          certificate: keptCertificate(req, error),
          hint,
          phone,
        }),
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
      try {
        const proof = await oidc.jpki.prove({ interactionId: interaction.id }, (await signedChallenge(req)).form);
        const user = await oidc.users.find(proof.userId);
        if (!user) throw notLinkedToAnyone();
        const { sessionId, step } = await oidc.flow.login(interaction, user, browser(req), proof.amr);
        setCookie(res, cookies, cookies.session, sessionId, oidc.sessionLifetimeSeconds);
        sendStep(res, step);
      } catch (error) {
        if (!(error instanceof JpkiError)) throw error;
        await signInView(req, res, interaction, error.status, error);
      }
    });

    const session = (req: Request) => readCookie(req, cookies.session);

    /** Nobody is signed in: the page says so and offers the account pages' sign-in, in its language. */
    function signInFirst(res: Response, lang: PageLanguage): void {
      send(res, 401, renderJpkiSignInFirstPage(lang, `${accountLoginPath}?ui_locales=${lang.locale}`), false);
    }

    async function linkView(
      req: Request,
      res: Response,
      sessionId: string,
      userId: string,
      status: number,
      extra: { error?: JpkiError; notice?: "linked" | "alreadyLinked" | "removed" } = {},
    ) {
      const lang = languages.ofPage(req);
      const user = await oidc.users.find(userId);
      if (!user) return signInFirst(res, lang);
      const now = Date.now();
      const links = (await oidc.jpki.linksOf(userId)).map((l) => ({
        certificateId: l.certificateId,
        type: l.type,
        linkedAt: l.linkedAt,
        expiresAt: l.notAfter,
        state:
          l.status === "revoked"
            ? ("revoked" as const)
            : l.notAfter <= now
              ? ("expired" as const)
              : isDueForRenewal(l.notAfter, now)
                ? ("renewSoon" as const)
                : ("good" as const),
      }));
      const challenge = await oidc.jpki.challenges.issue({ sessionId });
      const hint = await hints.jpkiForm?.(lang, { signer: userId, challengeText: challengeText(challenge) });
      // The language the page is in, and the certificate the phone is asked for, stay after the form is sent.
      const certificateKind = req.query.certificate === "signature" ? "signature" : "user_authentication";
      const action = `/account/jpki?ui_locales=${lang.locale}${certificateKind === "signature" ? "&certificate=signature" : ""}`;
      const csrf = csrfToken(oidc.secretKey, linkCsrfSubject(sessionId));
      const otherKind = certificateKind === "signature" ? "" : "&certificate=signature";
      const phone = await phoneFor(
        req,
        res,
        lang,
        { purpose: "link", binding: { sessionId }, certificateKind, clientName: "shomei", action, csrfToken: csrf },
        { ...phoneOptionsAfter(req, extra.error), ...(agreedToBasicInfo(req) ? { basicInfoConsentAt: now } : {}) },
      );
      const kindSwitch = html`<p class="footnote"><a id="link-other-kind" href="/account/jpki?ui_locales=${lang.locale}${otherKind}">${
        certificateKind === "signature" ? lang.t.jpki.phone.linkAuthentication : lang.t.jpki.phone.linkSignature
      }</a></p>`;
      send(
        res,
        status,
        renderJpkiLinkPage(lang, {
          action,
          removeAction: `/account/jpki/remove?ui_locales=${lang.locale}`,
          csrfToken: csrf,
          challenge,
          challengeText: challengeText(challenge),
          submit: "linkSubmit",
          userLogin: user.login,
          links,
          notice: extra.notice,
          error: extra.error && errorOf(lang, extra.error),
          errorFromPhone: signRequestOf(req) !== undefined,
          certificate: keptCertificate(req, extra.error),
          hint,
          phone: html`${phone}${kindSwitch}`,
        }),
      );
    }

    /** The signed-in session and its user, or undefined after the sign-in page was sent. */
    async function signedIn(req: Request, res: Response): Promise<{ sessionId: string; userId: string } | undefined> {
      const sessionId = session(req);
      const current = await oidc.flow.session(sessionId);
      if (sessionId && current) return { sessionId, userId: current.userId };
      signInFirst(res, languages.ofPage(req));
      return undefined;
    }

    router.get("/account/jpki", pageHeaders, async (req, res) => {
      const current = await signedIn(req, res);
      if (current) await linkView(req, res, current.sessionId, current.userId, 200);
    });

    router.post("/account/jpki", pageHeaders, jpkiForm, async (req, res) => {
      const current = await signedIn(req, res);
      if (!current) return;
      requireFormCsrf(oidc.secretKey, linkCsrfSubject(current.sessionId), req);
      if (agreedToBasicInfo(req)) return linkView(req, res, current.sessionId, current.userId, 200);
      try {
        const { alreadyLinked } = await oidc.jpki.link({ sessionId: current.sessionId }, (await signedChallenge(req)).form, current.userId);
        await linkView(req, res, current.sessionId, current.userId, 200, { notice: alreadyLinked ? "alreadyLinked" : "linked" });
      } catch (error) {
        if (!(error instanceof JpkiError)) throw error;
        await linkView(req, res, current.sessionId, current.userId, error.status, { error });
      }
    });

    // A link of another user, or none, answers like an unknown id: 404 and nothing removed.
    router.post("/account/jpki/remove", pageHeaders, removeForm, async (req, res) => {
      const current = await signedIn(req, res);
      if (!current) return;
      requireFormCsrf(oidc.secretKey, linkCsrfSubject(current.sessionId), req);
      const certificateId = (req.body as Record<string, unknown> | undefined)?.certificate_id;
      if (typeof certificateId !== "string" || !(await oidc.jpki.unlink(current.userId, certificateId))) {
        throw new OAuthError("invalid_request", "no such linked certificate", { status: 404 });
      }
      await linkView(req, res, current.sessionId, current.userId, 200, { notice: "removed" });
    });
  }

  return { stepUpView, stepUpSubmit, register };
}

/** After a refusal, the certificate pasted is given back (it is public; the signature is not, a new challenge needs a new one). */
function keptCertificate(req: Request, error: JpkiError | undefined): string | undefined {
  return error && signRequestOf(req) === undefined ? signedChallengeOf(req).certificate : undefined;
}

/** The linking form's CSRF token is bound to the session (there is no interaction). */
function linkCsrfSubject(sessionId: string): string {
  return `jpki-link:${sessionId}`;
}

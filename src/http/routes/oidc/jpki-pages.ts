import express, { type Request, type Response, type Router } from "express";
import type { LoadedInteraction } from "../../../domain/oidc/flow/authorization-flow.ts";
import { csrfToken, csrfTokenMatches } from "../../../domain/oidc/flow/secrets.ts";
import { challengeText } from "../../../domain/oidc/jpki/challenges.ts";
import { JpkiError } from "../../../domain/oidc/jpki/jpki-error.ts";
import type { SignedChallengeForm } from "../../../domain/oidc/jpki/signed-challenge.ts";
import type { AuthMethod } from "../../../domain/oidc/acr.ts";
import { OAuthError } from "../../../domain/oidc/oauth-error.ts";
import type { Oidc } from "../../../domain/oidc/provider.ts";
import { demoLogin } from "../../../domain/mock/oidc-demo-seed.ts";
import { cookieNames, readCookie, setCookie } from "../../cookies.ts";
import { mockCardContentSecurityPolicy, pageHeaders } from "../../middleware/page-headers.ts";
import { renderJpkiLinkPage, renderJpkiSignInFirstPage } from "../../pages/jpki-link.ts";
import { mockCardScriptPath, renderJpkiSignInPage, renderJpkiStepUpPage, type MockCardView } from "../../pages/jpki-sign.ts";
import { jpkiStrings } from "../../pages/jpki-strings.ts";
import { mockCardScript } from "../../pages/mock-card-script.ts";
import { sendStep } from "./steps.ts";

/** A PEM certificate and a signature, URL-encoded, with room to spare. */
export const jpkiForm = express.urlencoded({ extended: false, limit: 64 * 1024, parameterLimit: 20 });

export function isJpkiMethod(method: AuthMethod): boolean {
  return method === "jpki_sig" || method === "jpki_auth";
}

/** The signed challenge as the form carries it; missing fields are empty (the domain says what is wrong). */
export function signedChallengeOf(req: Request): SignedChallengeForm {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof body[name] === "string" ? (body[name] as string) : "");
  return { challenge: text("challenge").trim(), certificate: text("certificate"), signature: text("signature") };
}

export interface StepUpRequirement {
  acrLabel: string;
  methods: readonly AuthMethod[];
  reasons: string[];
}

/**
 * The JPKI pages: step-up with the card (a variant of /auth/reauth, which
 * calls in here), sign-in with the card (/auth/login/jpki), linking a
 * certificate (/account/jpki) and, in mock mode, the mock card's script.
 */
export function createJpkiPages(oidc: Oidc, mockMode: boolean) {
  const cookies = cookieNames(oidc.issuer);
  const browser = (req: Request) => readCookie(req, cookies.browser) ?? "";

  async function mockCardOf(userId: string | undefined): Promise<MockCardView | undefined> {
    if (!mockMode || !oidc.mockCards || !userId) return undefined;
    return oidc.mockCards.find(userId);
  }

  /** The page's CSP: scripts from this origin only when the mock card's script is on it. */
  function send(res: Response, status: number, body: string, mockCard: MockCardView | undefined): void {
    if (mockCard) res.set("Content-Security-Policy", mockCardContentSecurityPolicy);
    res.status(status).type("html").send(body);
  }

  const errorOf = (error: JpkiError) => ({ code: error.code, message: error.message });

  async function stepUpView(
    res: Response,
    interaction: LoadedInteraction,
    requirement: StepUpRequirement,
    status: number,
    error?: JpkiError,
  ): Promise<void> {
    const user = interaction.user!;
    const challenge = await oidc.jpki.challenges.issue({ interactionId: interaction.id });
    const mockCard = await mockCardOf(user.id);
    send(
      res,
      status,
      renderJpkiStepUpPage({
        action: `/auth/reauth?interaction=${encodeURIComponent(interaction.id)}`,
        csrfToken: csrfToken(oidc.secretKey, interaction.id),
        challenge,
        challengeText: challengeText(challenge),
        submitLabel: jpkiStrings.submit,
        clientName: interaction.client.name,
        userLogin: user.login,
        requiredAcrLabel: requirement.acrLabel,
        needsSignatureCertificate: requirement.methods.includes("jpki_sig"),
        reasons: requirement.reasons,
        error: error && errorOf(error),
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
      sendStep(res, await oidc.flow.reauthenticated(interaction, sessionId, proof.amr, browser(req)));
    } catch (error) {
      if (!(error instanceof JpkiError)) throw error;
      await stepUpView(res, interaction, requirement, error.status, error);
    }
  }

  function register(router: Router): void {
    if (mockMode) {
      router.get(mockCardScriptPath, (_req, res) => {
        res.set("Cache-Control", "no-cache").type("text/javascript").send(mockCardScript);
      });
    }

    const interactionId = (req: Request) => (typeof req.query.interaction === "string" ? req.query.interaction : "");
    const load = (req: Request) => oidc.flow.load(interactionId(req), readCookie(req, cookies.browser));

    async function signInView(res: Response, interaction: LoadedInteraction, status: number, error?: JpkiError) {
      const challenge = await oidc.jpki.challenges.issue({ interactionId: interaction.id });
      // Mock mode: the card of the demo user, the one person whose card the mock environment holds.
      const mockCard = await mockCardOf(mockMode ? (await oidc.users.findByLogin(demoLogin))?.id : undefined);
      send(
        res,
        status,
        renderJpkiSignInPage({
          action: `/auth/login/jpki?interaction=${encodeURIComponent(interaction.id)}`,
          csrfToken: csrfToken(oidc.secretKey, interaction.id),
          challenge,
          challengeText: challengeText(challenge),
          submitLabel: jpkiStrings.submit,
          clientName: interaction.client.name,
          error: error && errorOf(error),
          mockCard,
        }),
        mockCard,
      );
    }

    router.get("/auth/login/jpki", pageHeaders, async (req, res) => {
      await signInView(res, await load(req), 200);
    });

    router.post("/auth/login/jpki", pageHeaders, jpkiForm, async (req, res) => {
      const interaction = await load(req);
      requireCsrf(oidc, interaction.id, req);
      try {
        const proof = await oidc.jpki.prove({ interactionId: interaction.id }, signedChallengeOf(req));
        const user = await oidc.users.find(proof.userId);
        if (!user) throw new JpkiError("certificate_not_linked", "This certificate is not linked to any account.");
        const { sessionId, step } = await oidc.flow.login(interaction, user, browser(req), proof.amr);
        setCookie(res, cookies, cookies.session, sessionId, oidc.sessionLifetimeSeconds);
        sendStep(res, step);
      } catch (error) {
        if (!(error instanceof JpkiError)) throw error;
        await signInView(res, interaction, error.status, error);
      }
    });

    const session = (req: Request) => readCookie(req, cookies.session);

    async function linkView(res: Response, sessionId: string, userId: string, status: number, extra: { error?: JpkiError; notice?: string } = {}) {
      const user = await oidc.users.find(userId);
      if (!user) return send(res, 401, renderJpkiSignInFirstPage(), undefined);
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
        renderJpkiLinkPage({
          action: "/account/jpki",
          csrfToken: csrfToken(oidc.secretKey, linkCsrfSubject(sessionId)),
          challenge,
          challengeText: challengeText(challenge),
          submitLabel: jpkiStrings.linkSubmit,
          userLogin: user.login,
          links,
          notice: extra.notice,
          error: extra.error && errorOf(extra.error),
          mockCard,
        }),
        mockCard,
      );
    }

    router.get("/account/jpki", pageHeaders, async (req, res) => {
      const sessionId = session(req);
      const current = await oidc.flow.session(sessionId);
      if (!sessionId || !current) return send(res, 401, renderJpkiSignInFirstPage(), undefined);
      await linkView(res, sessionId, current.userId, 200);
    });

    router.post("/account/jpki", pageHeaders, jpkiForm, async (req, res) => {
      const sessionId = session(req);
      const current = await oidc.flow.session(sessionId);
      if (!sessionId || !current) return send(res, 401, renderJpkiSignInFirstPage(), undefined);
      requireCsrf(oidc, linkCsrfSubject(sessionId), req);
      try {
        await oidc.jpki.link({ sessionId }, signedChallengeOf(req), current.userId);
        await linkView(res, sessionId, current.userId, 200, { notice: jpkiStrings.linked });
      } catch (error) {
        if (!(error instanceof JpkiError)) throw error;
        await linkView(res, sessionId, current.userId, error.status, { error });
      }
    });
  }

  return { stepUpView, stepUpSubmit, register };
}

/** The linking form's CSRF token is bound to the session (there is no interaction). */
function linkCsrfSubject(sessionId: string): string {
  return `jpki-link:${sessionId}`;
}

function requireCsrf(oidc: Oidc, subject: string, req: Request): void {
  const body = req.body as Record<string, unknown> | undefined;
  if (!csrfTokenMatches(oidc.secretKey, subject, body?.csrf)) {
    throw new OAuthError("invalid_request", jpkiStrings.formExpired, { status: 403 });
  }
}

import { randomInt, timingSafeEqual } from "node:crypto";
import type { Clock } from "../../clock.ts";
import { open, seal } from "../../credentials/secret-box.ts";
import { randomToken, sha256Hex } from "../flow/secrets.ts";
import { challengeText, type ChallengeBinding, type JpkiChallenges } from "./challenges.ts";
import { JpkiError, type JpkiWording } from "./jpki-error.ts";
import { certificateDer, signatureOctets, type SignedChallengeForm } from "./signed-challenge.ts";

/** Which page asked for the signature. */
export type SignRequestPurpose = "sign_in" | "step_up" | "link";

/** Which of the card's two certificates the app is to sign with (and so which PIN it asks for). */
export type SignRequestCertificateKind = "user_authentication" | "signature";

/** pending → answered or refused (by the app), → used once the browser that asked took the outcome. */
export type SignRequestState = "pending" | "answered" | "refused" | "used";

/** What an app may report instead of a signature: the PIN is locked, or the person stopped. */
export type AppStop = "pin_locked" | "cancelled";
export type SignRequestRefusal = AppStop | "binding_code_mismatch";

export interface SignRequestRow {
  idHash: string;
  browserHash: string;
  purpose: SignRequestPurpose;
  challenge: string;
  certificateKind: SignRequestCertificateKind;
  clientName: string;
  bindingCodeSealed: string;
  state: SignRequestState;
  refusal: SignRequestRefusal | null;
  answerSealed: string | null;
  /** What the app last reported of the PIN's attempts left, while the request waits. */
  pinAttemptsRemaining: number | null;
  basicInfoConsentAt: number | null;
  createdAt: number;
  expiresAt: number;
}

/** What signing requests need from storage; src/storage implements it. */
export interface SignRequestStore {
  insertSignRequest(row: SignRequestRow): Promise<void>;
  findSignRequest(idHash: string): Promise<SignRequestRow | undefined>;
  /** pending → answered or refused, before expiry: one conditional UPDATE; true for the one caller that moved it. */
  settleSignRequest(idHash: string, now: number, outcome: { state: "answered"; answerSealed: string } | { state: "refused"; refusal: SignRequestRefusal }): Promise<boolean>;
  /** While pending and before expiry: the app's report of the PIN attempts left. */
  reportPinAttempts(idHash: string, now: number, remaining: number): Promise<boolean>;
  /** `from` → used, by the browser that asked, the answer dropped: one conditional UPDATE; true for the one caller that moved it. */
  useSignRequest(idHash: string, browserHash: string, from: "answered" | "refused"): Promise<boolean>;
}

/** A request as its page shows it: the id goes into the QR code and the app link, the code is shown beside them. */
export interface CreatedSignRequest {
  id: string;
  bindingCode: string;
  certificateKind: SignRequestCertificateKind;
  expiresAt: number;
}

/** What the app is told (GET): what to sign, with which certificate, for whom. */
export interface SignRequestForApp {
  purpose: SignRequestPurpose;
  challengeText: string;
  certificateKind: SignRequestCertificateKind;
  clientName: string;
  expiresAt: number;
}

/**
 * What an app sends (POST): the binding code the person typed, and a
 * signature, or why there is none, or (the request still open) how many PIN
 * attempts the card has left after a wrong one.
 */
export type AppAnswer = { bindingCode: string } & ({ certificate: string; signature: string } | { stopped: AppStop } | { pinAttemptsRemaining: number });

/** What the browser sees while it waits: the state, and the PIN attempts left when the app said. */
export interface SignRequestProgress {
  state: "pending" | "answered" | "refused" | "expired" | "used";
  pinAttemptsRemaining?: number | undefined;
}

const bindingCodeDigits = 6;
const idPattern = /^[A-Za-z0-9_-]{43}$/;

function invalid(wording: JpkiWording, message: string): JpkiError {
  return new JpkiError("sign_request_invalid", message, wording);
}
const unknownRequest = () => invalid("sign_request_unknown", "There is no such signing request.");
const expiredRequest = () => invalid("sign_request_expired", "The signing request has expired. Start again with the new one on the page.");
const usedRequest = () => invalid("sign_request_used", "The signing request was already answered. Each request takes one answer.");
const otherBrowser = () => invalid("sign_request_other_browser", "The signing request was started in another browser. Continue in the browser that shows it.");

/**
 * Signing requests: how a page that needs a card signature hands the
 * challenge to an app on a phone (QR code or app link) and learns the
 * answer. Guarded as cross-device flows should be: the id is 256 random
 * bits, stored by hash; a short binding code shown on the page must be typed
 * into the app, and a wrong one ends the request; each request takes one
 * answer and is short-lived; only the browser that asked can take the
 * outcome. The answer is checked afterwards exactly as a pasted signature
 * is (JpkiSignIn.prove or link), so the request only carries it.
 */
export class JpkiSignRequests {
  constructor(
    private readonly store: SignRequestStore,
    private readonly challenges: JpkiChallenges,
    private readonly key: Buffer,
    readonly lifetimeMs: number,
    private readonly clock: Clock,
  ) {}

  async create(input: {
    purpose: SignRequestPurpose;
    binding: ChallengeBinding;
    browserId: string;
    certificateKind: SignRequestCertificateKind;
    clientName: string;
    basicInfoConsentAt?: number | undefined;
  }): Promise<CreatedSignRequest> {
    if (input.certificateKind === "signature" && input.basicInfoConsentAt === undefined) {
      throw new TypeError("a signature certificate's request needs the holder's consent to its 基本4情報 first");
    }
    const id = randomToken();
    const bindingCode = String(randomInt(0, 10 ** bindingCodeDigits)).padStart(bindingCodeDigits, "0");
    const now = this.clock();
    const row: SignRequestRow = {
      idHash: sha256Hex(id),
      browserHash: sha256Hex(input.browserId),
      purpose: input.purpose,
      challenge: await this.challenges.issue(input.binding),
      certificateKind: input.certificateKind,
      clientName: input.clientName,
      bindingCodeSealed: seal(this.key, bindingCode, sealedFor(id, "code")),
      state: "pending",
      refusal: null,
      answerSealed: null,
      pinAttemptsRemaining: null,
      basicInfoConsentAt: input.basicInfoConsentAt ?? null,
      createdAt: now,
      expiresAt: now + this.lifetimeMs,
    };
    await this.store.insertSignRequest(row);
    return { id, bindingCode, certificateKind: row.certificateKind, expiresAt: row.expiresAt };
  }

  /** A pending request of this browser as its page shows it again (the continue button pressed before the app answered). */
  async reshow(id: string, browserId: string): Promise<CreatedSignRequest | undefined> {
    const row = await this.find(id);
    if (!row || row.browserHash !== sha256Hex(browserId) || row.state !== "pending" || row.expiresAt <= this.clock()) return undefined;
    return { id, bindingCode: open(this.key, row.bindingCodeSealed, sealedFor(id, "code")).toString("utf8"), certificateKind: row.certificateKind, expiresAt: row.expiresAt };
  }

  /** The app reads the request: only while it waits for its answer. */
  async forApp(id: string): Promise<SignRequestForApp> {
    const row = await this.pending(id);
    return { purpose: row.purpose, challengeText: challengeText(row.challenge), certificateKind: row.certificateKind, clientName: row.clientName, expiresAt: row.expiresAt };
  }

  /**
   * The app's answer. The binding code is checked first: a wrong one ends
   * the request (six digits are not to be guessed at leisure). The
   * certificate and signature need only be well-formed here; the page's
   * own check decides on them when the browser takes the answer.
   */
  async answer(id: string, answer: AppAnswer): Promise<void> {
    const row = await this.pending(id);
    const now = this.clock();
    const expected = open(this.key, row.bindingCodeSealed, sealedFor(id, "code"));
    const given = Buffer.from(answer.bindingCode.replace(/[\s-]/g, ""), "utf8");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      await this.store.settleSignRequest(row.idHash, now, { state: "refused", refusal: "binding_code_mismatch" });
      throw new JpkiError("binding_code_mismatch", "The binding code does not match the one on the page. The request has ended; start again on the page.");
    }
    if ("pinAttemptsRemaining" in answer) {
      if (!(await this.store.reportPinAttempts(row.idHash, now, answer.pinAttemptsRemaining))) throw (await this.find(id))?.state === "pending" ? expiredRequest() : usedRequest();
      return;
    }
    const outcome =
      "stopped" in answer
        ? ({ state: "refused", refusal: answer.stopped } as const)
        : ({ state: "answered", answerSealed: seal(this.key, JSON.stringify(wellFormed(answer)), sealedFor(id, "answer")) } as const);
    if (!(await this.store.settleSignRequest(row.idHash, now, outcome))) throw (await this.find(id))?.state === "pending" ? expiredRequest() : usedRequest();
  }

  /** Where the request is, for the page that waits (its own browser only). */
  async progress(id: string, browserId: string): Promise<SignRequestProgress> {
    const row = await this.find(id);
    if (!row) throw unknownRequest();
    if (row.browserHash !== sha256Hex(browserId)) throw otherBrowser();
    if (row.state === "pending" && row.expiresAt <= this.clock()) return { state: "expired" };
    return { state: row.state, pinAttemptsRemaining: row.state === "pending" ? (row.pinAttemptsRemaining ?? undefined) : undefined };
  }

  /**
   * The browser that asked takes the outcome, once: the signed challenge to
   * check (with the consent given before the request, if any), or the
   * refusal in words. A request still pending answers sign_request_pending.
   */
  async take(id: string, browserId: string): Promise<{ form: SignedChallengeForm; basicInfoConsentAt: number | undefined }> {
    const row = await this.find(id);
    if (!row) throw unknownRequest();
    if (row.browserHash !== sha256Hex(browserId)) throw otherBrowser();
    if (row.state === "used") throw usedRequest();
    if (row.state === "pending") {
      if (row.expiresAt <= this.clock()) throw expiredRequest();
      throw new JpkiError("sign_request_pending", "The app has not answered yet. Scan the code with it, or wait for it to finish.");
    }
    if (!(await this.store.useSignRequest(row.idHash, row.browserHash, row.state))) throw usedRequest();
    if (row.state === "refused") throw refusalOf(row.refusal);
    const signed = JSON.parse(open(this.key, row.answerSealed!, sealedFor(id, "answer")).toString("utf8")) as { certificate: string; signature: string };
    return { form: { challenge: row.challenge, ...signed }, basicInfoConsentAt: row.basicInfoConsentAt ?? undefined };
  }

  private async find(id: string): Promise<SignRequestRow | undefined> {
    return idPattern.test(id) ? this.store.findSignRequest(sha256Hex(id)) : undefined;
  }

  private async pending(id: string): Promise<SignRequestRow> {
    const row = await this.find(id);
    if (!row) throw unknownRequest();
    if (row.state !== "pending") throw usedRequest();
    if (row.expiresAt <= this.clock()) throw expiredRequest();
    return row;
  }
}

/** The associated data of a request's sealed values: a value copied into another row, or into the other column, does not open. */
function sealedFor(id: string, what: "code" | "answer"): string {
  return `jpki-sign-request:${what}:${sha256Hex(id)}`;
}

/** The certificate and signature, checked for shape only (PEM or base64; base64); bad ones are refused now, the request stays open. */
function wellFormed(answer: { certificate: string; signature: string }): { certificate: string; signature: string } {
  certificateDer(answer.certificate);
  signatureOctets(answer.signature);
  return { certificate: answer.certificate, signature: answer.signature };
}

function refusalOf(refusal: SignRequestRefusal | null): JpkiError {
  if (refusal === "pin_locked") {
    return new JpkiError("signing_stopped_by_app", "The app reports that the certificate's PIN is locked. The municipality can unlock it.", "pin_locked");
  }
  if (refusal === "cancelled") return new JpkiError("signing_stopped_by_app", "Signing was cancelled in the app.", "signing_cancelled");
  return new JpkiError("binding_code_mismatch", "The binding code typed into the app did not match the one on this page, so the request was ended. Try again with the new code.");
}

import { createPrivateKey, sign, X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline/promises";
import { UsageError } from "./usage-error.ts";

/** What the app reads (GET), as docs/jpki-app-protocol.md defines it. */
interface SignRequestJson {
  request: string;
  service: string;
  purpose: string;
  client_name: string;
  certificate: "user_authentication" | "signature";
  text: string;
  digest_algorithm: string;
  signature_algorithm: string;
  binding_code_length: number;
  expires_at: number;
}

/** The server refused the request or the answer (its error code and words), or could not be reached. */
export class SignRequestRefused extends Error {
  override name = "SignRequestRefused";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** fetch, with a network failure said as one: no stack trace for a server that is not there. */
async function send(url: URL, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    throw new SignRequestRefused("unreachable", `cannot reach ${url.origin} (${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message})`);
  }
}

export interface CardSignOptions {
  requestUrl: string;
  keyPem: string;
  certificatePem: string;
  bindingCode: string;
  /** Instead of signing, report that the PIN is locked or the person cancelled. */
  stop?: "pin_locked" | "cancelled" | undefined;
  /** Instead of answering, report the PIN attempts the card has left after a wrong PIN (the request stays open). */
  pinAttemptsRemaining?: number | undefined;
  /** Told what the request asks for before the answer is sent. */
  onRequest?: (request: SignRequestJson) => void;
}

async function json(reply: Response): Promise<Record<string, unknown>> {
  const body = (await reply.json().catch(() => ({}))) as Record<string, unknown>;
  if (!reply.ok) throw new SignRequestRefused(String(body.error ?? reply.status), String(body.error_description ?? reply.statusText));
  return body;
}

/**
 * The reference JPKI app: reads a signing request, signs its text with the
 * card's key (RSASSA-PKCS1-v1_5 over SHA-256, as the card does) and answers
 * with the certificate and the binding code. What the answer leads to is
 * shown on the page that asked.
 */
export async function answerSignRequest(options: CardSignOptions): Promise<{ request: SignRequestJson; state: string }> {
  const url = new URL(options.requestUrl);
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new UsageError("the request URL must be http or https");
  const request = (await json(await send(url, { headers: { accept: "application/json" } }))) as unknown as SignRequestJson;
  options.onRequest?.(request);
  const answer = options.stop
    ? { binding_code: options.bindingCode, stopped: options.stop }
    : options.pinAttemptsRemaining !== undefined
      ? { binding_code: options.bindingCode, pin_attempts_remaining: options.pinAttemptsRemaining }
      : {
        binding_code: options.bindingCode,
        certificate: new X509Certificate(options.certificatePem).raw.toString("base64"),
        signature: sign("sha256", Buffer.from(request.text, "utf8"), createPrivateKey(options.keyPem)).toString("base64"),
      };
  const reply = await json(await send(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(answer) }));
  return { request, state: String(reply.state) };
}

const certificateNames = { user_authentication: "user authentication certificate (利用者証明用電子証明書)", signature: "signature certificate (署名用電子証明書)" };

/** `shomei card sign <request URL> --key FILE --certificate FILE [--code CODE] [--stop pin_locked|cancelled | --pin-attempts-left N]` */
export async function cardCommand(positionals: string[], values: Record<string, unknown>): Promise<void> {
  const [action, requestUrl, ...extra] = positionals;
  if (action !== "sign" || !requestUrl || extra.length > 0) throw new UsageError("expected: card sign <request URL>");
  if (typeof values.key !== "string" || typeof values.certificate !== "string") throw new UsageError("--key and --certificate are required");
  const stop = values.stop;
  if (stop !== undefined && stop !== "pin_locked" && stop !== "cancelled") throw new UsageError("--stop must be pin_locked or cancelled");
  const attemptsLeft = values["pin-attempts-left"];
  if (attemptsLeft !== undefined && (typeof attemptsLeft !== "string" || !/^\d{1,2}$/.test(attemptsLeft))) throw new UsageError("--pin-attempts-left must be a number from 0 to 99");
  if (!URL.canParse(requestUrl)) throw new UsageError("the request URL is not a URL");
  const [keyPem, certificatePem] = await Promise.all([readFile(values.key, "utf8"), readFile(values.certificate, "utf8")]);
  const bindingCode = typeof values.code === "string" ? values.code : await askForCode();
  const { state } = await answerSignRequest({
    requestUrl,
    keyPem,
    certificatePem,
    bindingCode,
    stop,
    pinAttemptsRemaining: attemptsLeft === undefined ? undefined : Number(attemptsLeft),
    onRequest: (r) => console.log(`${r.service} asks for a signature for ${r.client_name} (${r.purpose}) with the ${certificateNames[r.certificate] ?? r.certificate}.`),
  });
  console.log(
    state === "answered" ? "Answered: the page continues by itself." : state === "pending" ? "Reported: the page shows the attempts left." : "Reported: the page says what happened.",
  );
}

async function askForCode(): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError("--code is required when there is no terminal to type the binding code in");
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return (await rl.question("Binding code shown on the page: ")).trim();
  } finally {
    rl.close();
  }
}

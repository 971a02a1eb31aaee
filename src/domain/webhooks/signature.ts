import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Standard Webhooks signatures: a secret is `whsec_` and the base64 of 32
 * random bytes (the key); the signature of a message is `v1,` and the base64
 * HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under the key.
 * Several secrets (during a rotation) sign side by side, separated by spaces,
 * as the specification allows: a receiver accepts any one it knows.
 */
const prefix = "whsec_";

export function newWebhookSecret(): string {
  return prefix + randomBytes(32).toString("base64");
}

export function signWebhook(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(prefix.length), "base64");
      return "v1," + createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
    })
    .join(" ");
}

/** The three headers of a signed request. */
export function webhookHeaders(secrets: readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    // A CloudEvent in the JSON structured mode (CloudEvents HTTP binding).
    "content-type": "application/cloudevents+json; charset=utf-8",
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signWebhook(secrets, id, timestampSeconds, body),
  };
}

/** How far a webhook-timestamp may be from now for a receiver to accept it (the specification's advice: 5 minutes). */
export const timestampToleranceSeconds = 5 * 60;

/**
 * A receiver's check: some `v1,` signature of the headers matches one of
 * the secrets (compared in constant time), and the timestamp is recent.
 */
export function verifyWebhook(secrets: readonly string[], headers: Record<string, string | undefined>, body: string, nowMs: number): boolean {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > timestampToleranceSeconds) return false;
  const given = signatures.split(" ").filter((s) => s.startsWith("v1,")).map((s) => Buffer.from(s.slice(3), "base64"));
  return secrets.some((secret) => {
    const expected = Buffer.from(signWebhook([secret], id, Number(timestamp), body).slice(3), "base64");
    return given.some((g) => g.length === expected.length && timingSafeEqual(g, expected));
  });
}

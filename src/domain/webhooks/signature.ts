import { createHmac, randomBytes } from "node:crypto";

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

import type { Clock } from "../clock.ts";
import type { WebhookStore } from "../webhooks/model.ts";
import { verifyWebhook } from "../webhooks/signature.ts";
import type { WebhookEndpoints } from "../webhooks/webhook-endpoints.ts";

/** One request the demo receiver got. */
export interface ReceivedWebhook {
  receivedAt: number;
  webhookId: string;
  /** The CloudEvent's type, when the body is one. */
  type: string;
  /** Whether a signature matched the secret of an endpoint aimed at the receiver. */
  verified: boolean;
  /** The body, pretty-printed when it is JSON, cut at maxBodyChars. */
  body: string;
}

const kept = 50;
const maxBodyChars = 8192;

/**
 * The mock environment's webhook receiver (`/demo/webhooks`): checks each
 * request's signature against the secrets of the endpoints aimed at it (an
 * endpoint whose URL ends with the receiver's path, of any account: this is
 * the demo's one shared receiver) and keeps the last 50, in memory, so a
 * developer sees an event arrive without writing a receiver first.
 */
export class DemoWebhookReceiver {
  private readonly received: ReceivedWebhook[] = [];

  constructor(
    private readonly store: Pick<WebhookStore, "endpointsWithUrlEnding">,
    private readonly endpoints: Pick<WebhookEndpoints, "signingSecrets">,
    private readonly clock: Clock,
    private readonly path: string,
  ) {}

  async receive(headers: Record<string, string | undefined>, body: string): Promise<ReceivedWebhook> {
    const now = this.clock();
    const targets = await this.store.endpointsWithUrlEnding(this.path);
    const verified = targets.some((endpoint) => verifyWebhook(this.endpoints.signingSecrets(endpoint, now), headers, body, now));
    const item: ReceivedWebhook = { receivedAt: now, webhookId: headers["webhook-id"] ?? "", type: typeOf(body), verified, body: pretty(body).slice(0, maxBodyChars) };
    this.received.unshift(item);
    this.received.length = Math.min(this.received.length, kept);
    return item;
  }

  /** Newest first. */
  list(): readonly ReceivedWebhook[] {
    return this.received;
  }
}

function parsed(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function typeOf(body: string): string {
  const value = parsed(body) as { type?: unknown } | undefined;
  return typeof value?.type === "string" ? value.type.slice(0, 100) : "";
}

function pretty(body: string): string {
  const value = parsed(body);
  return value === undefined ? body : JSON.stringify(value, null, 2);
}

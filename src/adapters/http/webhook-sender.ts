import type { WebhookRequest, WebhookResponse, WebhookSender } from "../../domain/webhooks/model.ts";
import { createGuardedRequests } from "./guarded-request.ts";

export interface WebhookSenderSettings {
  /** The whole exchange, from connecting to the status line and the excerpt, within this. */
  timeoutMs: number;
  /** Whether plain http: and loopback, private or link-local addresses may be reached. */
  allowPrivate: boolean;
  /** How much of a response body is read and kept. */
  excerptBytes: number;
}

/**
 * Sends webhook requests (and logout tokens) under the network policy of
 * guarded-request.ts: no redirects, one deadline, checked addresses. Only
 * the status and an excerpt of the body are kept.
 */
export function createWebhookSender(settings: WebhookSenderSettings): WebhookSender & { close(): void } {
  const requests = createGuardedRequests({ timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivate, keepAlive: true });
  return {
    close: () => requests.close(),
    async send(request: WebhookRequest): Promise<WebhookResponse> {
      const body = Buffer.from(request.body, "utf8");
      const answer = await requests.request({ url: request.url, method: "POST", headers: request.headers, body, readBytes: settings.excerptBytes });
      if ("error" in answer) return answer;
      return { statusCode: answer.statusCode, excerpt: answer.body.subarray(0, settings.excerptBytes).toString("utf8"), durationMs: answer.durationMs };
    },
  };
}

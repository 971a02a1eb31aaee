import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { isNonPublicAddress } from "../../domain/webhooks/private-address.ts";
import type { WebhookRequest, WebhookResponse, WebhookSender } from "../../domain/webhooks/model.ts";
import { describeFetchError } from "./limited-fetch.ts";

export interface WebhookSenderSettings {
  /** The whole exchange, from connecting to the status line and the excerpt, within this. */
  timeoutMs: number;
  /** Whether plain http: and loopback, private or link-local addresses may be reached. */
  allowPrivate: boolean;
  /** How much of a response body is read and kept. */
  excerptBytes: number;
}

/** Why an attempt was not sent: the address a name resolved to is not one a webhook may reach. */
class RefusedAddressError extends Error {
  readonly code = "EREFUSEDADDRESS";
}

/**
 * Sends webhook requests with node:http and node:https (not fetch, whose
 * connections cannot be steered): redirects are never followed (a 3xx is
 * an answer like any other), the exchange has one deadline, and at most
 * `excerptBytes` of the body are read. Unless private addresses are
 * allowed, `http:` is refused and the host name is resolved here and
 * checked, and the connection goes to the checked address: a name that
 * resolves to a private address (or is made to, between registration and
 * now) is refused at connection time.
 */
export function createWebhookSender(settings: WebhookSenderSettings): WebhookSender & { close(): void } {
  const agents = { "http:": new http.Agent({ keepAlive: true }), "https:": new https.Agent({ keepAlive: true }) };
  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 4);
      const allowed = addresses.filter((a) => settings.allowPrivate || isNonPublicAddress(a.address) === false);
      if (!allowed.length) return callback(new RefusedAddressError(`${hostname} resolves to a loopback, private or link-local address`), "", 4);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };

  return {
    close() {
      agents["http:"].destroy();
      agents["https:"].destroy();
    },
    send(request: WebhookRequest): Promise<WebhookResponse> {
      const started = performance.now();
      const elapsed = () => performance.now() - started;
      const url = new URL(request.url);
      if (!settings.allowPrivate) {
        if (url.protocol !== "https:") return Promise.resolve({ error: "refused: only https:// endpoints are allowed", durationMs: 0 });
        if (isNonPublicAddress(url.hostname) === true || /^localhost$|\.localhost$/i.test(url.hostname)) {
          return Promise.resolve({ error: "refused: a loopback, private or link-local address", durationMs: 0 });
        }
      }
      const client = url.protocol === "https:" ? https : http;
      const agent = url.protocol === "https:" ? agents["https:"] : agents["http:"];
      const body = Buffer.from(request.body, "utf8");
      return new Promise<WebhookResponse>((resolve) => {
        let settled = false;
        const finish = (result: WebhookResponse) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(result);
        };
        const req = client.request(url, {
          method: "POST",
          agent,
          lookup,
          headers: { ...request.headers, "content-length": String(body.length) },
        });
        const timer = setTimeout(() => {
          finish({ error: `no answer within ${settings.timeoutMs} ms`, durationMs: elapsed() });
          req.destroy();
        }, settings.timeoutMs);
        req.on("error", (error) => finish({ error: describeError(error), durationMs: elapsed() }));
        req.on("response", (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const done = () => {
            const excerpt = Buffer.concat(chunks).subarray(0, settings.excerptBytes).toString("utf8");
            finish({ statusCode: res.statusCode ?? 0, excerpt, durationMs: elapsed() });
          };
          res.on("data", (chunk: Buffer) => {
            if (size < settings.excerptBytes) chunks.push(chunk);
            size += chunk.length;
            // Enough is read: the rest is not wanted, and the connection is not kept.
            if (size >= settings.excerptBytes) {
              done();
              res.destroy();
            }
          });
          res.on("end", done);
          res.on("error", done);
        });
        req.end(body);
      });
    },
  };
}

function describeError(error: unknown): string {
  if (error instanceof RefusedAddressError) return `refused: ${error.message}`;
  return describeFetchError(error);
}

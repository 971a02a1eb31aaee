import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { isNonPublicAddress } from "../../domain/webhooks/private-address.ts";
import { describeFetchError } from "./limited-fetch.ts";

/** The network policy of the requests this server makes to URLs others registered (webhooks, logout tokens, client key sets). */
export interface GuardedRequestSettings {
  /** The whole exchange, from connecting to the last byte read, within this. */
  timeoutMs: number;
  /** Whether plain http: and loopback, private or link-local addresses may be reached. */
  allowPrivate: boolean;
  /** Kept-alive connections (webhooks, sent often), or a connection per request (occasional fetches). */
  keepAlive: boolean;
}

export interface GuardedRequest {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: Buffer;
  /** Reading stops once this many bytes of the body have arrived; the rest is not wanted. */
  readBytes: number;
}

export type GuardedResponse =
  | {
      statusCode: number;
      headers: http.IncomingHttpHeaders;
      /** At least the first readBytes of the body (the whole of it when `complete`). */
      body: Buffer;
      /** Whether the body ended before readBytes were read. */
      complete: boolean;
      durationMs: number;
    }
  | { error: string; durationMs: number };

/** Why a request was not sent: the address a name resolved to is not one it may reach. */
class RefusedAddressError extends Error {
  readonly code = "EREFUSEDADDRESS";
}

/**
 * Requests to URLs that others registered, made with node:http and
 * node:https (not fetch, whose connections cannot be steered): redirects are
 * never followed (a 3xx is an answer like any other), the exchange has one
 * deadline, and at most about `readBytes` of the body are read. Unless
 * private addresses are allowed, `http:` is refused and the host name is
 * resolved here and checked, and the connection goes to the checked
 * address: a name that resolves to a private address (or is made to,
 * between registration and now) is refused at connection time (SSRF).
 */
export function createGuardedRequests(settings: GuardedRequestSettings): { request(request: GuardedRequest): Promise<GuardedResponse>; close(): void } {
  const agents = {
    "http:": new http.Agent({ keepAlive: settings.keepAlive }),
    "https:": new https.Agent({ keepAlive: settings.keepAlive }),
  };
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
    request(request: GuardedRequest): Promise<GuardedResponse> {
      const started = performance.now();
      const elapsed = () => performance.now() - started;
      const url = new URL(request.url);
      if (!settings.allowPrivate) {
        if (url.protocol !== "https:") return Promise.resolve({ error: "refused: only https:// endpoints are allowed", durationMs: 0 });
        if (isNonPublicAddress(url.hostname) === true || /^localhost$|\.localhost$/i.test(url.hostname)) {
          return Promise.resolve({ error: "refused: a loopback, private or link-local address", durationMs: 0 });
        }
      }
      if (url.protocol !== "https:" && url.protocol !== "http:") return Promise.resolve({ error: "refused: only http(s):// URLs", durationMs: 0 });
      const client = url.protocol === "https:" ? https : http;
      const agent = url.protocol === "https:" ? agents["https:"] : agents["http:"];
      const headers = request.body ? { ...request.headers, "content-length": String(request.body.length) } : request.headers;
      return new Promise<GuardedResponse>((resolve) => {
        let settled = false;
        const finish = (result: GuardedResponse) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(result);
        };
        const req = client.request(url, { method: request.method, agent, lookup, headers });
        const timer = setTimeout(() => {
          finish({ error: `no answer within ${settings.timeoutMs} ms`, durationMs: elapsed() });
          req.destroy();
        }, settings.timeoutMs);
        req.on("error", (error) => finish({ error: describeError(error), durationMs: elapsed() }));
        req.on("response", (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const done = (complete: boolean) => {
            finish({ statusCode: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete, durationMs: elapsed() });
          };
          res.on("data", (chunk: Buffer) => {
            if (size < request.readBytes) chunks.push(chunk);
            size += chunk.length;
            // Enough is read: the rest is not wanted, and the connection is not kept.
            if (size >= request.readBytes) {
              done(false);
              res.destroy();
            }
          });
          res.on("end", () => done(true));
          res.on("error", () => done(false));
        });
        req.end(request.body);
      });
    },
  };
}

function describeError(error: unknown): string {
  if (error instanceof RefusedAddressError) return `refused: ${error.message}`;
  return describeFetchError(error);
}

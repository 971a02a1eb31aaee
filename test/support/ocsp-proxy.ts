import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { OCSPResponse, OCSPResponseStatus } from "@peculiar/asn1-ocsp";
import { AsnConvert } from "@peculiar/asn1-schema";

export type Behaviour =
  /** Forward to the responder, the request changed by `rewrite` when set. */
  | "forward"
  | "tryLater"
  | "malformed"
  | "error500"
  /** Accept the request and never answer. */
  | "silent";

/**
 * A loopback HTTP server in front of an OCSP responder (or of nothing): it
 * takes requests by GET (url/base64) and POST as clients send them, counts
 * them, and forwards them as POST, after `rewrite` when set; or answers
 * tryLater (an OCSPResponse built with the ASN.1 library), garbage, 500, or
 * nothing at all.
 */
export class OcspProxy {
  behaviour: Behaviour = "forward";
  rewrite: ((request: Uint8Array) => Uint8Array) | undefined;
  requests = 0;
  readonly methods: string[] = [];
  private server: Server | undefined;
  private base = "";

  /** The responder requests are forwarded to; it may be set after the proxy starts. */
  constructor(public upstream: string | undefined) {}

  get url(): string {
    return this.base;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void (async () => {
        this.requests++;
        this.methods.push(req.method ?? "");
        const request = await requestDer(req);
        if (this.behaviour === "silent") return;
        if (this.behaviour === "error500") return void res.writeHead(500).end("unavailable");
        const answer =
          this.behaviour === "tryLater"
            ? new Uint8Array(AsnConvert.serialize(new OCSPResponse({ responseStatus: OCSPResponseStatus.tryLater })))
            : this.behaviour === "malformed"
              ? new TextEncoder().encode("this is not an OCSP response")
              : await this.forward(this.rewrite ? this.rewrite(request) : request);
        res.writeHead(200, { "content-type": "application/ocsp-response", "content-length": answer.length }).end(answer);
      })().catch(() => res.writeHead(502).end());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async forward(request: Uint8Array): Promise<Uint8Array> {
    if (!this.upstream) throw new Error("no responder behind this proxy");
    const response = await fetch(this.upstream, { method: "POST", headers: { "content-type": "application/ocsp-request" }, body: request });
    return new Uint8Array(await response.arrayBuffer());
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

async function requestDer(req: IncomingMessage): Promise<Uint8Array> {
  if (req.method === "GET") return Buffer.from(decodeURIComponent((req.url ?? "/").slice(1)), "base64");
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

import http from "node:http";
import http2 from "node:http2";

/**
 * Sends requests exactly as given (any method, path, headers and body bytes)
 * over HTTP/1.1 with keep-alive, or over HTTP/2 cleartext with prior
 * knowledge (h2c) on one shared session, and reads each answer completely:
 * status, headers, HTTP/2 trailers and body. Unlike fetch it neither
 * normalizes the path nor refuses bodies on GET, and it shows trailers, which
 * gRPC needs.
 */
export type HttpTransport = "http1" | "h2c";

export interface RawRequest {
  transport: HttpTransport;
  method: string;
  /** Path and query, sent as is. */
  path: string;
  /** A list sends the header once per value. */
  headers: Record<string, string | string[]>;
  body?: Buffer;
}

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  trailers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Headers HTTP/2 forbids (RFC 9113 §8.2.2); Node's client refuses to send them. */
const connectionHeaders = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"]);

export class RawClient {
  private readonly agent: http.Agent;
  private session: http2.ClientHttp2Session | undefined;

  constructor(
    readonly baseUrl: string,
    private readonly timeoutMs: number,
    maxSockets = 8,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  send(request: RawRequest): Promise<RawReply> {
    // A client must not send a larger header list than the server advertised (RFC 9113 §6.5.2); one
    // that does gets its stream refused, as HTTP/2 provides. Such requests go over HTTP/1.1 (431 there).
    if (request.transport === "h2c" && headerListSize(request) > this.maxHeaderListSize()) {
      return this.sendHttp1({ ...request, transport: "http1" });
    }
    return request.transport === "http1" ? this.sendHttp1(request) : this.sendH2c(request);
  }

  private maxHeaderListSize(): number {
    const advertised = this.session?.remoteSettings.maxHeaderListSize;
    return advertised !== undefined && advertised < 0xffffffff ? advertised : 65_536;
  }

  close(): void {
    this.agent.destroy();
    this.session?.destroy();
  }

  /**
   * A kept-alive connection the server closes as idle just when a request
   * leaves on it resets that request before the server read it; like other
   * HTTP clients, it is sent again once on a fresh connection.
   */
  private async sendHttp1(request: RawRequest): Promise<RawReply> {
    try {
      return await this.sendHttp1Once(request);
    } catch (error) {
      if ((error as { reusedSocketReset?: boolean }).reusedSocketReset) return this.sendHttp1Once(request);
      throw error;
    }
  }

  private sendHttp1Once(request: RawRequest): Promise<RawReply> {
    const url = new URL(this.baseUrl);
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, method: request.method, path: request.path, headers: request.headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, body: Buffer.concat(chunks) }));
          res.on("error", reject);
        },
      );
      req.setTimeout(this.timeoutMs, () => req.destroy(new Error(`no complete answer within ${this.timeoutMs} ms`)));
      req.on("error", (error: NodeJS.ErrnoException) => {
        reject(req.reusedSocket && error.code === "ECONNRESET" ? Object.assign(error, { reusedSocketReset: true }) : error);
      });
      req.end(request.body);
    });
  }

  private h2(): http2.ClientHttp2Session {
    if (!this.session || this.session.closed || this.session.destroyed) {
      const session = http2.connect(this.baseUrl);
      // Errors reach the streams; a session-level error only means the next request opens a new session.
      session.on("error", () => undefined);
      session.on("goaway", () => session.close());
      this.session = session;
    }
    return this.session;
  }

  private sendH2c(request: RawRequest): Promise<RawReply> {
    return new Promise((resolve, reject) => {
      const headers: http2.OutgoingHttpHeaders = { ":method": request.method, ":path": request.path };
      for (const [name, value] of Object.entries(request.headers)) {
        if (!connectionHeaders.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
      }
      let stream: http2.ClientHttp2Stream;
      try {
        stream = this.h2().request(headers, { endStream: !request.body });
      } catch (error) {
        reject(error as Error);
        return;
      }
      let status = 0;
      let responseHeaders: RawReply["headers"] = {};
      let trailers: RawReply["trailers"] = {};
      const chunks: Buffer[] = [];
      stream.setTimeout(this.timeoutMs, () => stream.destroy(new Error(`no complete answer within ${this.timeoutMs} ms`)));
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        responseHeaders = h;
      });
      stream.on("trailers", (t) => (trailers = t));
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      let ended = false;
      stream.on("end", () => {
        ended = true;
        resolve({ status, headers: responseHeaders, trailers, body: Buffer.concat(chunks) });
      });
      stream.on("error", reject);
      // A reset stream may close without "end" or "error"; a settled promise ignores this.
      stream.on("close", () => {
        if (!ended) reject(new Error(`stream closed before the answer ended (status ${status}, RST code ${stream.rstCode})`));
      });
      if (request.body) stream.end(request.body);
    });
  }
}

/** RFC 9113 §6.5.2: each field counts its name and value in octets plus 32, pseudo-headers included. */
function headerListSize(request: RawRequest): number {
  let size = 32 + ":method".length + request.method.length + 32 + ":path".length + Buffer.byteLength(request.path);
  for (const [name, value] of Object.entries(request.headers)) {
    for (const one of Array.isArray(value) ? value : [value]) size += 32 + name.length + Buffer.byteLength(one);
  }
  return size;
}

import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { addressKey } from "../domain/credentials/client-address.ts";
import type { Logger } from "../observability/logger.ts";
import type { AnyRequest, AnyResponse } from "./exchange.ts";
import type { RequestClasses } from "./express-on-node.ts";

/** What one client may hold and how long it may take; see docs/reference/operations.md, Configuration. */
export interface ConnectionLimits {
  /** To send a request's headers (HTTP/1.1), and a new connection's first bytes. */
  headersTimeoutMs: number;
  /** To send a whole HTTP/1.1 request; also how long an HTTP/2 session or TLS socket may sit idle. */
  requestTimeoutMs: number;
  /** How long an idle HTTP/1.1 keep-alive connection is kept. */
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /** Per client address (IPv6 per /64). */
  maxConnectionsPerAddress: number;
}

export interface ListenOptions {
  host?: string | undefined;
  port: number;
  tls?: { certFile: string; keyFile: string } | undefined;
  limits: ConnectionLimits;
  logger: Logger;
  /** The classes the servers make requests and responses from (see expressOnNode); Node's own when not given. */
  requestClasses?: RequestClasses | undefined;
}

export interface Listener {
  address: AddressInfo;
  secure: boolean;
  /**
   * Stops accepting, lets in-flight requests finish (up to the timeout), then
   * closes every connection. A connection accepted just before, whose first
   * request has not arrived yet, gets a short grace to send it, and it is
   * answered as the connection's last.
   */
  close(inFlight: () => number, timeoutMs: number): Promise<void>;
}

type Handler = (req: AnyRequest, res: AnyResponse) => void;

/** How long, at shutdown, a connection that has not sent its first request yet may still send it. */
const firstRequestGraceMs = 1000;

/** How often Node's HTTP/1.1 server looks for requests past their headers or request timeout. */
const timeoutCheckIntervalMs = 1000;

/** Every HTTP/2 connection starts with this preface (RFC 9113 §3.4); HTTP/1.x never does. */
const http2Preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * One port for every protocol. With TLS, ALPN chooses h2 or http/1.1. Without
 * TLS, Node's http2 server cannot fall back to HTTP/1.1, so each new
 * connection's first bytes are read: the HTTP/2 preface sends it to the HTTP/2
 * server (gRPC, Connect over h2c), anything else to the HTTP/1.1 server
 * (browsers, curl, Connect, gRPC-Web). The bytes read are put back first.
 */
export async function listen(handler: Handler, options: ListenOptions): Promise<Listener> {
  const { logger, limits } = options;
  const sockets = new Set<Socket>();
  const sessions = new Set<http2.Http2Session>();
  // Connections that have not carried a request yet: at shutdown they get a grace to send one.
  const awaitingFirstRequest = new Set<Socket>();
  // HTTP/1.1 responses in progress, so that shutdown can make them the last on their connection.
  const http1Responses = new Set<http.ServerResponse>();
  let closing = false;
  const dispatch: Handler = (req, res) => {
    if (res instanceof http.ServerResponse) track(http1Responses, res);
    awaitingFirstRequest.delete(req.socket as Socket);
    handler(req, res);
  };
  const admit = connectionAdmission(limits, logger);
  let accepted = 0;
  const onSession = (session: http2.Http2Session) => {
    track(sessions, session);
    const socket = session.socket as Socket | undefined;
    session.once("stream", () => {
      if (socket) awaitingFirstRequest.delete(socket);
      // A session that began during shutdown serves the streams it opened first, then goes away.
      if (closing) setImmediate(() => session.close());
    });
  };
  let http1: http.Server | undefined;
  let acceptor: net.Server;

  // Advertised so that clients know the limit (RFC 9113 §6.5.2): larger header lists are refused by
  // nghttp2 whether or not it is announced, as REFUSED_STREAM, which a client may retry elsewhere.
  const h2options: http2.ServerOptions = { settings: { maxConcurrentStreams: 250, maxHeaderListSize: 65_536 }, ...options.requestClasses?.http2 };
  if (options.tls) {
    const secure = http2.createSecureServer(
      {
        ...h2options,
        cert: readFileSync(options.tls.certFile),
        key: readFileSync(options.tls.keyFile),
        allowHTTP1: true,
        ...(options.requestClasses && {
          Http1IncomingMessage: options.requestClasses.http1.IncomingMessage,
          Http1ServerResponse: options.requestClasses.http1.ServerResponse,
        }),
        ALPNProtocols: ["h2", "http/1.1"],
        handshakeTimeout: limits.headersTimeoutMs,
      },
      dispatch,
    );
    secure.setTimeout(limits.requestTimeoutMs);
    secure.on("connection", (socket: Socket) => {
      accepted++;
      if (!admit(socket)) return;
      track(sockets, socket);
      track(awaitingFirstRequest, socket);
    });
    // HTTP/1.1 negotiated by ALPN is parsed by Node's HTTP/1.1 server code, which reports bad requests here.
    secure.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => answerMalformed(error, socket));
    secure.on("session", onSession);
    acceptor = secure;
  } else {
    const h1 = http.createServer(
      {
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        connectionsCheckingInterval: timeoutCheckIntervalMs,
        ...options.requestClasses?.http1,
      },
      dispatch as http.RequestListener,
    );
    h1.on("clientError", (error: NodeJS.ErrnoException, socket) => answerMalformed(error, socket));
    const h2 = http2.createServer(h2options, dispatch);
    h2.setTimeout(limits.requestTimeoutMs);
    h2.on("session", onSession);
    h2.on("sessionError", (error) => logger.debug({ err: error }, "http/2 session error"));
    // The HTTP/1.1 server only receives connections handed over below, so it never listens; but its
    // headers and request timeouts run only once it has seen "listening", which is what starts them.
    h1.emit("listening");
    http1 = h1;
    acceptor = net.createServer((socket) => {
      accepted++;
      if (!admit(socket)) return;
      track(sockets, socket);
      track(awaitingFirstRequest, socket);
      routeByPreface(socket, h1, h2, limits.headersTimeoutMs);
    });
  }
  acceptor.maxConnections = limits.maxConnections;

  await new Promise<void>((resolve, reject) => {
    acceptor.once("error", reject);
    acceptor.listen(options.port, options.host, () => {
      acceptor.off("error", reject);
      resolve();
    });
  });
  acceptor.on("error", (error) => logger.error({ err: error }, "listener error"));

  return {
    address: acceptor.address() as AddressInfo,
    secure: Boolean(options.tls),
    async close(inFlight, timeoutMs) {
      closing = true;
      await acceptPending(() => accepted);
      acceptor.close();
      for (const session of sessions) session.close();
      for (const res of http1Responses) if (!res.headersSent) res.setHeader("Connection", "close");
      const started = Date.now();
      const deadline = started + timeoutMs;
      const graceEnds = started + Math.min(firstRequestGraceMs, timeoutMs);
      const pending = () => inFlight() > 0 || (awaitingFirstRequest.size > 0 && Date.now() < graceEnds);
      while (pending() && Date.now() < deadline) {
        // Node counts a connection that has not sent its first request as idle too: spare those during the grace.
        if (awaitingFirstRequest.size === 0 || Date.now() >= graceEnds) http1?.closeIdleConnections();
        await new Promise((r) => setTimeout(r, 10));
      }
      if (inFlight() > 0) logger.warn({ inFlight: inFlight() }, "shutdown timeout: closing connections with requests in flight");
      // Stops the HTTP/1.1 server's timeout checks; it was never listening, so the callback gets an error to ignore.
      http1?.close(() => undefined);
      for (const socket of sockets) socket.destroy();
      for (const session of sessions) session.destroy();
    },
  };
}

/**
 * Connections the kernel has completed but Node has not accepted yet are reset
 * when the listening socket closes, although their clients already count them
 * as open. Each turn of the event loop accepts what is pending, so turns are
 * given until one accepts nothing (a few milliseconds; at most 50 turns).
 */
async function acceptPending(acceptedSoFar: () => number): Promise<void> {
  for (let turn = 0; turn < 50; turn++) {
    const before = acceptedSoFar();
    await new Promise((resolve) => setTimeout(resolve, 0));
    await new Promise((resolve) => setImmediate(resolve));
    if (turn > 0 && acceptedSoFar() === before) return;
  }
}

/**
 * Enforces the connection limits as connections arrive: past the per-address
 * limit a connection is closed at once (the total is the listener's
 * maxConnections). Returns whether the connection may stay.
 */
function connectionAdmission(limits: ConnectionLimits, logger: Logger): (socket: Socket) => boolean {
  const perAddress = new Map<string, number>();
  return (socket) => {
    const key = addressKey(socket.remoteAddress ?? "unknown");
    const open = perAddress.get(key) ?? 0;
    if (open >= limits.maxConnectionsPerAddress) {
      logger.debug({ limit: limits.maxConnectionsPerAddress }, "connection refused: too many from one address");
      socket.destroy();
      return false;
    }
    perAddress.set(key, open + 1);
    socket.once("close", () => {
      const left = (perAddress.get(key) ?? 1) - 1;
      if (left === 0) perAddress.delete(key);
      else perAddress.set(key, left);
    });
    return true;
  };
}

function routeByPreface(socket: Socket, h1: http.Server, h2: http2.Http2Server, firstBytesTimeoutMs: number): void {
  let received: Buffer = Buffer.alloc(0);
  const fail = () => socket.destroy();
  socket.setTimeout(firstBytesTimeoutMs, fail);
  socket.on("error", fail);
  const onData = (chunk: Buffer) => {
    received = received.length ? Buffer.concat([received, chunk]) : chunk;
    const n = Math.min(received.length, http2Preface.length);
    const looksLikeHttp2 = received.subarray(0, n).equals(http2Preface.subarray(0, n));
    if (looksLikeHttp2 && received.length < http2Preface.length) return;
    socket.off("data", onData);
    socket.off("error", fail);
    socket.setTimeout(0);
    socket.pause();
    socket.unshift(received);
    (looksLikeHttp2 ? h2 : h1).emit("connection", socket);
    process.nextTick(() => socket.resume());
  };
  socket.on("data", onData);
}

/** Malformed or too slow HTTP/1.1 gets a short JSON answer (headers only for HEAD) and a closed connection, never a stack trace. */
function answerMalformed(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || error.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const [status, body] = clientErrorAnswer(error.code);
  // A response to HEAD has no body, even this one (the method is read from the raw bytes: there is no request object).
  const raw = (error as { rawPacket?: unknown }).rawPacket;
  const json = Buffer.isBuffer(raw) && raw.subarray(0, 5).toString("latin1") === "HEAD " ? "" : JSON.stringify(body);
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`);
}

function clientErrorAnswer(code: string | undefined): [string, { error: string; error_description: string }] {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return ["431 Request Header Fields Too Large", { error: "headers_too_large", error_description: "the request headers are too large" }];
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return ["408 Request Timeout", { error: "request_timeout", error_description: "the request was not received in time" }];
    default:
      return ["400 Bad Request", { error: "bad_request", error_description: "the request is not valid HTTP" }];
  }
}

function track<T extends { once(event: "close", listener: () => void): unknown }>(set: Set<T>, item: T): void {
  set.add(item);
  item.once("close", () => set.delete(item));
}

import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "../observability/logger.ts";
import type { AnyRequest, AnyResponse } from "./request-handler.ts";

export interface ListenOptions {
  host?: string | undefined;
  port: number;
  tls?: { certFile: string; keyFile: string } | undefined;
  logger: Logger;
}

export interface Listener {
  address: AddressInfo;
  secure: boolean;
  /** Stops accepting, lets in-flight requests finish (up to the timeout), then closes every connection. */
  close(inFlight: () => number, timeoutMs: number): Promise<void>;
}

type Handler = (req: AnyRequest, res: AnyResponse) => void;

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
  const sockets = new Set<Socket>();
  const sessions = new Set<http2.Http2Session>();
  // HTTP/1.1 responses in progress, so that shutdown can make them the last on their connection.
  const http1Responses = new Set<http.ServerResponse>();
  const dispatch: Handler = (req, res) => {
    if (res instanceof http.ServerResponse) track(http1Responses, res);
    handler(req, res);
  };
  const { logger } = options;
  let http1: http.Server | undefined;
  let acceptor: net.Server;

  const h2options: http2.ServerOptions = { settings: { maxConcurrentStreams: 250 } };
  if (options.tls) {
    const secure = http2.createSecureServer(
      {
        ...h2options,
        cert: readFileSync(options.tls.certFile),
        key: readFileSync(options.tls.keyFile),
        allowHTTP1: true,
        ALPNProtocols: ["h2", "http/1.1"],
      },
      dispatch,
    );
    secure.on("secureConnection", (socket: Socket) => track(sockets, socket));
    // HTTP/1.1 negotiated by ALPN is parsed by Node's HTTP/1.1 server code, which reports bad requests here.
    secure.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => answerMalformed(error, socket));
    secure.on("session", (session: http2.Http2Session) => track(sessions, session));
    acceptor = secure;
  } else {
    const h1 = http.createServer(dispatch as http.RequestListener);
    h1.on("clientError", (error: NodeJS.ErrnoException, socket) => answerMalformed(error, socket));
    const h2 = http2.createServer(h2options, dispatch);
    h2.on("session", (session: http2.Http2Session) => track(sessions, session));
    h2.on("sessionError", (error) => logger.debug({ err: error }, "http/2 session error"));
    http1 = h1;
    acceptor = net.createServer((socket) => {
      track(sockets, socket);
      routeByPreface(socket, h1, h2);
    });
  }

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
      acceptor.close();
      for (const session of sessions) session.close();
      for (const res of http1Responses) if (!res.headersSent) res.setHeader("Connection", "close");
      const deadline = Date.now() + timeoutMs;
      while (inFlight() > 0 && Date.now() < deadline) {
        http1?.closeIdleConnections();
        await new Promise((r) => setTimeout(r, 25));
      }
      if (inFlight() > 0) logger.warn({ inFlight: inFlight() }, "shutdown timeout: closing connections with requests in flight");
      for (const socket of sockets) socket.destroy();
      for (const session of sessions) session.destroy();
    },
  };
}

function routeByPreface(socket: Socket, h1: http.Server, h2: http2.Http2Server): void {
  let received: Buffer = Buffer.alloc(0);
  const fail = () => socket.destroy();
  socket.setTimeout(30_000, fail);
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

/** Malformed HTTP/1.1 gets a short JSON 400 and a closed connection, never a stack trace. */
function answerMalformed(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || error.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === "HPE_HEADER_OVERFLOW";
  const body = JSON.stringify({
    error: tooLarge ? "headers_too_large" : "bad_request",
    error_description: tooLarge ? "the request headers are too large" : "the request is not valid HTTP",
  });
  socket.end(
    `HTTP/1.1 ${tooLarge ? "431 Request Header Fields Too Large" : "400 Bad Request"}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function track<T extends { once(event: "close", listener: () => void): unknown }>(set: Set<T>, item: T): void {
  set.add(item);
  item.once("close", () => set.delete(item));
}

import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Certificate_Type as CertificateType } from "../../gen/service/verify/v2/certificate_pb.ts";
import { certificateServicePath, countStatuses, createTenant, setupClients, type Tenant } from "../support/certificate-rpc.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/**
 * Request bodies that are not the protobuf message a procedure takes must be
 * answered as the client's fault (invalid_argument), in every protocol; and a
 * call without a valid token is refused as unauthenticated before its body is
 * decoded at all.
 */

const sqlite = (await databaseTargets()).find((t) => t.name === "sqlite")!;
const checkPath = `${certificateServicePath}/CheckCertificateStatus`;

/** Bytes that no protobuf decoder accepts: field number 0 is illegal. */
const notProtobuf = Uint8Array.from([0x00]);
/** A length-delimited field that promises more bytes than follow. */
const truncated = Uint8Array.from([0x0a, 0x20, 0x61, 0x62]);

const frame = (payload: Uint8Array, flags = 0): Buffer => {
  const out = Buffer.alloc(5 + payload.byteLength);
  out[0] = flags;
  out.writeUInt32BE(payload.byteLength, 1);
  out.set(payload, 5);
  return out;
};

interface Outcome {
  /** The Connect code name, or the gRPC status as a number in text. */
  code: string;
  message: string;
  httpStatus: number;
  raw: string;
}

/** A POST over HTTP/1.1 with the token (when given) and the content type: what every protocol's call below sends. */
function rawPost(server: TestServer, token: string | undefined, path: string, contentType: string, body: Uint8Array | string, headers: Record<string, string> = {}) {
  return fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": contentType, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers },
    body,
  });
}

/** Connect unary over HTTP/1.1: the code is in the JSON body. */
async function connectCall(server: TestServer, token: string, body: Uint8Array, headers: Record<string, string> = {}): Promise<Outcome> {
  const response = await rawPost(server, token, checkPath, "application/proto", body, headers);
  const raw = await response.text();
  const parsed = JSON.parse(raw) as { code: string; message: string };
  return { code: parsed.code, message: parsed.message, httpStatus: response.status, raw };
}

/** gRPC-Web over HTTP/1.1: the status is in the trailer frame at the end of the body. */
async function grpcWebCall(server: TestServer, token: string, body: Uint8Array, path = checkPath): Promise<Outcome> {
  const response = await rawPost(server, token, path, "application/grpc-web+proto", body);
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(bytes[0]).toBe(0x80);
  const trailer = bytes.subarray(5).toString("latin1");
  const field = (name: string) => new RegExp(`^${name}: (.*)$`, "m").exec(trailer)?.[1]?.trim() ?? "";
  return { code: field("grpc-status"), message: decodeURIComponent(field("grpc-message")), httpStatus: response.status, raw: trailer };
}

/** gRPC over HTTP/2 cleartext: the status is in the trailers. */
function grpcCall(server: TestServer, token: string, body: Uint8Array, path = checkPath): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(server.url);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      authorization: `Bearer ${token}`,
    });
    let httpStatus = 0;
    // The status comes in the trailers, or in the headers of a trailers-only answer.
    let status: http2.IncomingHttpHeaders = {};
    stream.on("response", (headers) => {
      httpStatus = Number(headers[":status"]);
      if (headers["grpc-status"] !== undefined) status = headers;
    });
    stream.on("trailers", (trailers) => (status = trailers));
    stream.on("data", () => undefined);
    stream.on("end", () => {
      session.close();
      const message = String(status["grpc-message"] ?? "");
      resolve({ code: String(status["grpc-status"]), message: decodeURIComponent(message), httpStatus, raw: JSON.stringify(status) });
    });
    stream.on("error", reject);
    stream.end(body);
  });
}

/** Connect streaming over HTTP/1.1: the error is in the end-of-stream frame (flag 2), a JSON object. */
async function connectStreamCall(server: TestServer, token: string, body: Uint8Array, path: string): Promise<Outcome> {
  const response = await rawPost(server, token, path, "application/connect+proto", body);
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(bytes[0]).toBe(0x02);
  const raw = bytes.subarray(5).toString("utf8");
  const { error } = JSON.parse(raw) as { error: { code: string; message: string } };
  return { code: error.code, message: error.message, httpStatus: response.status, raw };
}

describe("malformed binary bodies", () => {
  let scratch: ScratchDatabase;
  let server: TestServer;
  let tenant: Tenant;
  let certificateId: string;

  beforeAll(async () => {
    scratch = await sqlite.create();
    server = await startTestServer(scratch.url);
    tenant = await createTenant(server, "malformed");
    const created = await setupClients(server, tenant.token).mock.createMockCertificate({ type: CertificateType.JPKI_CARD_DIGITAL_SIGNATURE });
    certificateId = created.certificate!.id;
  });
  afterAll(async () => {
    await server?.close();
    await scratch?.drop();
  });

  const expectedMessage = "the request body is not a valid service.verify.v2.CheckCertificateStatusRequest message";

  it.each([
    ["an illegal field number", notProtobuf],
    ["a truncated length-delimited field", truncated],
  ])("Connect binary: %s is invalid_argument (HTTP 400) without decoder details", async (_name, body) => {
    const outcome = await connectCall(server, tenant.token, body);
    expect({ httpStatus: outcome.httpStatus, code: outcome.code, message: outcome.message }).toEqual({
      httpStatus: 400,
      code: "invalid_argument",
      message: expectedMessage,
    });
    expect(outcome.raw).not.toMatch(/illegal|parse binary|wire type/);
  });

  it("Connect binary: a gzip body that is not gzip is invalid_argument", async () => {
    const outcome = await connectCall(server, tenant.token, notProtobuf, { "content-encoding": "gzip" });
    expect({ httpStatus: outcome.httpStatus, code: outcome.code }).toEqual({ httpStatus: 400, code: "invalid_argument" });
  });

  it("gRPC over h2c: a bad message is status 3 (INVALID_ARGUMENT), not 13", async () => {
    const outcome = await grpcCall(server, tenant.token, frame(notProtobuf));
    expect({ httpStatus: outcome.httpStatus, code: outcome.code, message: outcome.message }).toEqual({
      httpStatus: 200,
      code: "3",
      message: expectedMessage,
    });
  });

  it("gRPC over h2c: a compressed frame without grpc-encoding is status 3", async () => {
    const outcome = await grpcCall(server, tenant.token, frame(notProtobuf, 1));
    expect(outcome.code).toBe("3");
  });

  it("gRPC-Web: a bad message is status 3 in the trailer frame", async () => {
    const outcome = await grpcWebCall(server, tenant.token, frame(truncated));
    expect({ httpStatus: outcome.httpStatus, code: outcome.code, message: outcome.message }).toEqual({
      httpStatus: 200,
      code: "3",
      message: expectedMessage,
    });
  });

  it("a bad token with a bad body is refused as unauthenticated in every protocol: the body is never decoded", async () => {
    const connect = await connectCall(server, "not-a-token", notProtobuf);
    expect({ httpStatus: connect.httpStatus, code: connect.code }).toEqual({ httpStatus: 401, code: "unauthenticated" });
    expect(connect.raw).toContain("ERROR_REASON_TOKEN_INVALID");
    const connectGzip = await connectCall(server, "not-a-token", notProtobuf, { "content-encoding": "gzip" });
    expect(connectGzip.code).toBe("unauthenticated");
    expect((await grpcCall(server, "not-a-token", frame(notProtobuf))).code).toBe("16");
    expect((await grpcCall(server, "not-a-token", frame(notProtobuf, 1))).code).toBe("16");
    expect((await grpcWebCall(server, "not-a-token", frame(truncated))).code).toBe("16");
  });

  it("a valid token with a valid body still works over gRPC, and junk wrote no status record", async () => {
    const before = await countStatuses(server, tenant.account.id);
    // Field 1 (certificate_id), length-delimited.
    const id = Buffer.from(certificateId);
    const message = Buffer.concat([Buffer.from([0x0a, id.byteLength]), id]);
    const outcome = await grpcCall(server, tenant.token, frame(message));
    expect(outcome.code).toBe("0");
    expect(await countStatuses(server, tenant.account.id)).toBe(before + 1);
  });

  it("Connect: an unsupported content coding is 415 with Accept-Encoding, not 501", async () => {
    const response = await rawPost(server, tenant.token, checkPath, "application/json", "{}", { "content-encoding": "zstd" });
    expect(response.status).toBe(415);
    expect(response.headers.get("accept-encoding")).toBe("gzip, br");
    expect(await response.json()).toEqual({
      code: "invalid_argument",
      message: "the request's content coding is not supported: use one of gzip, br, or none",
    });
  });

  it("Connect GET: a message that is not base64 is invalid_argument", async () => {
    const response = await fetch(`${server.url}${certificateServicePath}/GetCertificate?connect=v1&encoding=proto&message=e&base64=1`, {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: "invalid_argument",
      message: "the request body is not a valid service.verify.v2.GetCertificateRequest message",
    });
  });

  it("gRPC with JSON: a lone surrogate in a value is status 3, answered rather than left hanging", async () => {
    const json = Buffer.from('{"checkMethod":"\\ud800"}');
    const outcome = await new Promise<Outcome>((resolve, reject) => {
      const session = http2.connect(server.url);
      session.on("error", reject);
      const stream = session.request({
        ":method": "POST",
        ":path": checkPath,
        "content-type": "application/grpc+json",
        te: "trailers",
        authorization: `Bearer ${tenant.token}`,
      });
      let status = "";
      let message = "";
      stream.on("response", (headers) => {
        status = String(headers["grpc-status"] ?? "");
        message = String(headers["grpc-message"] ?? "");
      });
      stream.on("trailers", (trailers) => {
        status = String(trailers["grpc-status"] ?? status);
        message = String(trailers["grpc-message"] ?? message);
      });
      stream.on("data", () => undefined);
      stream.on("end", () => {
        session.close();
        resolve({ code: status, message: decodeURIComponent(message), httpStatus: 200, raw: "" });
      });
      stream.on("error", reject);
      stream.end(frame(json));
    });
    expect(outcome.code).toBe("3");
  });

  it("HEAD with oversized headers gets 431 without a body", async () => {
    const net = await import("node:net");
    const received = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(server.port, "127.0.0.1", () => socket.write(`HEAD /healthz?x=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
      let text = "";
      socket.on("data", (chunk) => (text += chunk.toString("latin1")));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    expect(received).toMatch(/^HTTP\/1\.1 431 /);
    expect(received).toMatch(/Content-Length: 0\r\n/);
    expect(received.endsWith("\r\n\r\n")).toBe(true);
  });

  describe("a server-streaming call, whose message is decoded after the interceptors run", () => {
    const watchPath = "/service.verify.v2.EventService/WatchEvents";
    const watchMessage = "the request body is not a valid service.verify.v2.WatchEventsRequest message";

    it("gRPC: a truncated message or a compressed frame without grpc-encoding is status 3, not 13", async () => {
      for (const body of [frame(truncated), frame(notProtobuf, 1)]) {
        const outcome = await grpcCall(server, tenant.token, body, watchPath);
        expect({ code: outcome.code, message: outcome.message }).toEqual({ code: "3", message: watchMessage });
      }
    });

    it("gRPC-Web: a truncated message is status 3 in the trailer frame", async () => {
      const outcome = await grpcWebCall(server, tenant.token, frame(truncated), watchPath);
      expect({ httpStatus: outcome.httpStatus, code: outcome.code, message: outcome.message }).toEqual({ httpStatus: 200, code: "3", message: watchMessage });
    });

    it("Connect streaming: a truncated message ends the stream with invalid_argument, without decoder details", async () => {
      const outcome = await connectStreamCall(server, tenant.token, frame(truncated), watchPath);
      expect({ code: outcome.code, message: outcome.message }).toEqual({ code: "invalid_argument", message: watchMessage });
      expect(outcome.raw).not.toMatch(/premature|parse binary/);
    });
  });

  describe("text that is not UTF-8 is refused, not stored with U+FFFD in its place", () => {
    const createPath = "/service.verify.v2.OAuthClientService/CreateOAuthClient";
    const listPath = "/service.verify.v2.OAuthClientService/ListOAuthClients";
    const post = (path: string, contentType: string, body: Uint8Array | string) => rawPost(server, tenant.token, path, contentType, body);
    const clientCount = async () => ((await (await post(listPath, "application/json", "{}")).json()) as { oauthClients?: unknown[] }).oauthClients?.length ?? 0;

    it("Connect JSON: bytes that are not UTF-8 in a value are invalid_argument, and no client is made", async () => {
      const before = await clientCount();
      const body = Buffer.concat([Buffer.from('{"name":"bad'), Buffer.from([0xff, 0xfe]), Buffer.from('name","scopes":["certificate.status"]}')]);
      const response = await post(createPath, "application/json", body);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ code: "invalid_argument", message: "the JSON request is not valid UTF-8" });
      expect(await clientCount()).toBe(before);
    });

    it("Connect binary: a string field that is not UTF-8 is invalid_argument, and no client is made", async () => {
      const before = await clientCount();
      // Field 1 (name), length 5: "bad" and two bytes that are no UTF-8.
      const body = Uint8Array.from([0x0a, 0x05, 0x62, 0x61, 0x64, 0xff, 0xfe]);
      const outcome = await post(createPath, "application/proto", body);
      expect(outcome.status).toBe(400);
      expect(await outcome.json()).toEqual({ code: "invalid_argument", message: "the request body is not a valid service.verify.v2.CreateOAuthClientRequest message" });
      expect(await clientCount()).toBe(before);
    });

    it("gRPC: the same field is status 3", async () => {
      const outcome = await grpcCall(server, tenant.token, frame(Uint8Array.from([0x0a, 0x02, 0xc3, 0x28])), createPath);
      expect(outcome.code).toBe("3");
    });
  });

  describe("a procedure the server does not have is answered in the caller's protocol", () => {
    const unknownPath = `${certificateServicePath}/NoSuchMethod`;
    const message = `this server has no procedure ${unknownPath}`;

    it("gRPC: status 12 (UNIMPLEMENTED), trailers only", async () => {
      const outcome = await grpcCall(server, tenant.token, frame(new Uint8Array()), unknownPath);
      expect({ httpStatus: outcome.httpStatus, code: outcome.code, message: outcome.message }).toEqual({ httpStatus: 200, code: "12", message });
    });

    it("gRPC-Web: status 12 in the trailer frame, in the codec asked for", async () => {
      const outcome = await grpcWebCall(server, tenant.token, frame(new Uint8Array()), unknownPath);
      expect({ httpStatus: outcome.httpStatus, code: outcome.code, message: outcome.message }).toEqual({ httpStatus: 200, code: "12", message });
      const json = await rawPost(server, undefined, unknownPath, "application/grpc-web+json", frame(Buffer.from("{}")));
      expect(json.headers.get("content-type")).toBe("application/grpc-web+json");
      // gRPC-Web's base64 form is not one the router speaks: the web's 404, not a binary frame it cannot read.
      const text = await rawPost(server, undefined, unknownPath, "application/grpc-web-text", "AAAAAAA=");
      expect(text.status).toBe(404);
    });

    it("Connect: 404 with an error of code unimplemented; a path that names no procedure still gets the web 404", async () => {
      const response = await rawPost(server, tenant.token, unknownPath, "application/json", "{}");
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ code: "unimplemented", message });
      const web = await fetch(`${server.url}/api/nothing-here`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(web.status).toBe(404);
      expect(((await web.json()) as { error: string }).error).toBe("not_found");
    });
  });

  it("logs no error for bad bodies (they are the client's fault)", () => {
    expect(server.logs.filter((line) => line.level === "error" || line.level === 50)).toEqual([]);
  });
});

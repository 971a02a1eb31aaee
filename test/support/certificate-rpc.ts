import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  type Http2SessionManager,
} from "@connectrpc/connect-node";
import { expect } from "vitest";
import { ErrorInfoSchema, type ErrorInfo } from "../../gen/google/rpc/error_details_pb.ts";
import { CertificateService } from "../../gen/service/verify/v2/certificate_service_pb.ts";
import { MockService } from "../../gen/service/verify/v2/mock_service_pb.ts";
import type { AccountRow } from "../../src/domain/accounts/accounts.ts";
import type { StatusRecord } from "../../src/domain/certificates/model.ts";
import { CertificatesRepository } from "../../src/storage/certificates-repository.ts";
import type { TestServer } from "./server.ts";

/** A frame of a JavaScript/TypeScript stack trace, as it would leak into a response. */
export const stackTracePattern = /\bat .+\.ts:\d+/;

export const certificateServicePath = "/service.verify.v2.CertificateService";
export const mockServicePath = "/service.verify.v2.MockService";

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An API account with an active token. */
export interface Tenant {
  account: AccountRow;
  token: string;
}

export async function createTenant(server: TestServer, name: string, apiStatus: AccountRow["apiStatus"] = "active"): Promise<Tenant> {
  const account = await server.domain.accounts.create(name, apiStatus);
  const { token } = await server.domain.accounts.createToken(name, `${name} test token`);
  return { account, token };
}

/** Sends "Authorization: Bearer <token>" on every call of a transport. */
export function bearer(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("Authorization", `Bearer ${token}`);
    return next(req);
  };
}

export interface Protocol {
  name: string;
  transport(baseUrl: string, interceptors: Interceptor[], h2: Http2SessionManager): Transport;
}

/** The four ways a generated client reaches the service. */
export const protocols: Protocol[] = [
  {
    name: "Connect JSON over HTTP/1.1",
    transport: (baseUrl, interceptors) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false, interceptors }),
  },
  {
    name: "Connect binary over HTTP/1.1",
    transport: (baseUrl, interceptors) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true, interceptors }),
  },
  {
    name: "gRPC-Web over HTTP/1.1",
    transport: (baseUrl, interceptors) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1", interceptors }),
  },
  {
    name: "gRPC over HTTP/2",
    transport: (baseUrl, interceptors, h2) => createGrpcTransport({ baseUrl, sessionManager: h2, interceptors }),
  },
];

export interface Clients {
  certificates: Client<typeof CertificateService>;
  mock: Client<typeof MockService>;
}

export function clients(transport: Transport): Clients {
  return { certificates: createClient(CertificateService, transport), mock: createClient(MockService, transport) };
}

/** Connect binary over HTTP/1.1 acting for a token: what test setup uses to create and set mock certificates. */
export function setupClients(server: TestServer, token: string): Clients {
  return clients(createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", useBinaryFormat: true, interceptors: [bearer(token)] }));
}

/**
 * Awaits a call that must fail and checks its Connect code and its one
 * google.rpc.ErrorInfo detail: reason, domain and metadata (exactly `{ field }`
 * for field errors, empty otherwise). `reason: null` means "no detail at all".
 */
export async function expectRpcError(
  call: Promise<unknown>,
  code: Code,
  reason: string | null,
  field?: string,
): Promise<ConnectError> {
  const error = await call.then(
    (value) => {
      throw new Error(`expected ${Code[code]}, got a response: ${JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))}`);
    },
    (e: unknown) => ConnectError.from(e),
  );
  expect({ code: Code[error.code], message: error.rawMessage }).toMatchObject({ code: Code[code] });
  expect(error.rawMessage).not.toMatch(stackTracePattern);
  const infos = error.findDetails(ErrorInfoSchema);
  if (reason === null) {
    expect(infos).toEqual([]);
  } else {
    expect(infos).toHaveLength(1);
    expect({ reason: infos[0]!.reason, domain: infos[0]!.domain, metadata: infos[0]!.metadata }).toEqual({
      reason,
      domain: "verify.shomei",
      metadata: field === undefined ? {} : { field },
    });
  }
  return error;
}

export interface JsonReply {
  status: number;
  contentType: string | null;
  text: string;
}

/** A POST as curl would send it, with the body exactly as given. */
export async function post(url: string, body: string | Uint8Array, headers: Record<string, string>): Promise<JsonReply> {
  const response = await fetch(url, { method: "POST", headers, body });
  const text = await response.text();
  expect(text).not.toMatch(stackTracePattern);
  return { status: response.status, contentType: response.headers.get("content-type"), text };
}

export function postJson(server: TestServer, procedure: string, body: string, token?: string, extra: Record<string, string> = {}): Promise<JsonReply> {
  return post(server.url + procedure, body, {
    "Content-Type": "application/json",
    ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
    ...extra,
  });
}

/** The ErrorInfo details of a Connect JSON error body (decoded from their binary `value`). */
export function errorInfosOf(body: { details?: { type: string; value: string }[] }): ErrorInfo[] {
  return (body.details ?? []).map((d) => {
    expect(d.type).toBe("google.rpc.ErrorInfo");
    return fromBinary(ErrorInfoSchema, Buffer.from(d.value, "base64"));
  });
}

/** How many status records an account has, counted in the database. */
export function countStatuses(server: TestServer, accountId: string): Promise<number> {
  return new CertificatesRepository(server.database).countStatuses(accountId);
}

/** A certificate's status records as stored, newest first. */
export async function statusRecords(server: TestServer, accountId: string, certificateId: string): Promise<StatusRecord[]> {
  return new CertificatesRepository(server.database).listStatuses(accountId, certificateId, 1000);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

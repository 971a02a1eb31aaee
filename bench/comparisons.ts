/**
 * What each comparison measures: the two sides, the servers they need, and
 * the requests each sends (docs/bench-method.md).
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { CheckCertificateStatusRequestSchema } from "../gen/service/verify/v2/certificate_service_pb.ts";
import { connections, type Instance } from "./harness.ts";
import type { LoadJob } from "./load/job.ts";
import { authorizeQuery, basicAuthorization, mintRefreshTokens, pkcePair, signIn, type Provider } from "./oidc-session.ts";
import type { EchoInstance } from "./servers/peers.ts";
import { largeHistory, type ServerName, type Servers } from "./servers/pool.ts";
import { verifyBodies, type Shomei } from "./servers/shomei.ts";

export const comparisonNames = [
  "check_sqlite_vs_connect",
  "check_pg_vs_connect",
  "check_grpc_sqlite_vs_connect",
  "check_grpc_pg_vs_connect",
  "check_ocsp_sqlite_vs_connect",
  "check_mock_sqlite_vs_connect",
  "verify_vs_bare_crypto",
  "verify_pg_vs_bare_crypto",
  "par_sqlite_vs_oidc_provider",
  "par_pg_vs_oidc_provider",
  "authorize_vs_oidc_provider",
  "refresh_vs_oidc_provider",
  "batch_vs_single",
  "batch_vs_single_pg",
  "check_1m_vs_10k_rows",
] as const;
export type ComparisonName = (typeof comparisonNames)[number];

const checkPath = "/service.verify.v2.CertificateService/CheckCertificateStatus";
const verifyPath = "/service.verify.v2.VerificationService/Verify";
const batchPath = "/service.verify.v2.CertificateService/BatchCheckCertificateStatus";
const batchConnections = Number(process.env.BENCH_BATCH_CONNECTIONS ?? 4);
const json = { "content-type": "application/json" };
const form = { "content-type": "application/x-www-form-urlencoded" };

/**
 * One side of a comparison: the processes that answer for it (a round takes
 * one of them, in turn) and the job that loads one (made anew for every
 * slice).
 */
export interface Side {
  label: string;
  instances: readonly Instance[];
  job: (instance: Instance) => Promise<Omit<LoadJob, "seconds" | "connections">>;
  /** Units per request (ids per batch call); 1 when not given. */
  per?: number;
  /** Requests in flight, when not the run's `connections`. */
  connections?: number;
  unit?: string;
}

export interface Comparison {
  title: string;
  shomei: Side;
  peer: Side;
  /** How many times the run's BENCH_SECONDS each side gets in a round; 1 when not given. */
  roundScale?: number;
}

export const needs: Record<ComparisonName, ServerName[]> = {
  check_sqlite_vs_connect: ["sqlite", "echo"],
  check_pg_vs_connect: ["postgres", "echo"],
  check_grpc_sqlite_vs_connect: ["sqlite", "echo"],
  check_grpc_pg_vs_connect: ["postgres", "echo"],
  check_ocsp_sqlite_vs_connect: ["sqlite", "echo"],
  check_mock_sqlite_vs_connect: ["sqliteMock", "echo"],
  verify_vs_bare_crypto: ["sqlite", "echo"],
  verify_pg_vs_bare_crypto: ["postgres", "echo"],
  par_sqlite_vs_oidc_provider: ["sqlite", "oidcProvider"],
  par_pg_vs_oidc_provider: ["postgres", "oidcProvider"],
  authorize_vs_oidc_provider: ["sqlite", "oidcProvider"],
  refresh_vs_oidc_provider: ["sqlite", "oidcProvider"],
  batch_vs_single: ["sqlite", "sqlite10k"],
  batch_vs_single_pg: ["postgres"],
  check_1m_vs_10k_rows: ["sqlite10k", "sqlite1m"],
};

/** A gRPC message on the wire: uncompressed flag, big-endian length, the bytes. */
function grpcFrame(message: Uint8Array): string {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame.toString("base64");
}

const checkBodies = (s: Shomei, checkMethod?: string) => s.certificateIds.map((certificateId) => JSON.stringify({ certificateId, ...(checkMethod ? { checkMethod } : {}) }));
const checkFrames = (s: Shomei) =>
  s.certificateIds.map((certificateId) => grpcFrame(toBinary(CheckCertificateStatusRequestSchema, create(CheckCertificateStatusRequestSchema, { certificateId }))));

/** shomei's endpoints, and how its demo user answers the login and consent pages. */
function shomeiProvider(s: Shomei): Provider {
  return {
    base: s.url,
    authorizePath: "/api/oidc/v1/authorize",
    parPath: "/api/oidc/v1/par",
    tokenPath: "/api/oidc/v1/token",
    clientId: s.clientId,
    clientSecret: s.clientSecret,
    redirectUri: s.redirectUri,
    pageFields: { "/auth/login": s.login, "/auth/consent": { decision: "allow" } },
  };
}

function peerProvider(issuer: string, clientSecret: string): Provider {
  return {
    base: issuer,
    authorizePath: "/auth",
    parPath: "/request",
    tokenPath: "/token",
    clientId: "demo-client",
    clientSecret,
    redirectUri: `${issuer}/demo/callback`,
    pageFields: {},
  };
}

/** CheckCertificateStatus of `s`'s certificates, sent to `instances` (shomei's own, or the echo server's). */
function checkSide(label: string, s: Shomei, instances: readonly Instance[], protocol: "http1" | "grpc", checkMethod?: string): Side {
  const headers = { authorization: `Bearer ${s.token}` };
  if (protocol === "grpc") {
    const frames = checkFrames(s);
    return { label, instances, job: async ({ url }) => ({ name: label, protocol, origin: url, path: checkPath, headers, frames }) };
  }
  const bodies = checkBodies(s, checkMethod);
  return {
    label,
    instances,
    job: async ({ url }) => ({ name: label, protocol, url: `${url}${checkPath}`, method: "POST", headers: { ...json, ...headers }, bodies }),
  };
}

/** The echo server's processes, by Connect over HTTP/1.1 or by gRPC. */
const echoInstances = (echo: { instances: readonly EchoInstance[] }, grpc = false): Instance[] => echo.instances.map((e) => ({ pid: e.pid, url: grpc ? e.h2c : e.http1 }));

function parSide(label: string, provider: Provider, instances: readonly Instance[]): Side {
  const body = new URLSearchParams({
    response_type: "code",
    client_id: provider.clientId,
    redirect_uri: provider.redirectUri,
    scope: "openid profile",
    state: "bench-state",
    code_challenge: pkcePair().challenge,
    code_challenge_method: "S256",
  }).toString();
  const headers = { ...form, authorization: basicAuthorization(provider.clientId, provider.clientSecret) };
  return {
    label,
    instances,
    job: async ({ url }) => ({ name: label, protocol: "http1", url: `${url}${provider.parPath}`, method: "POST", headers, bodies: [body], expectStatus: 201 }),
  };
}

/** GET authorize in a signed-in browser whose grant covers the scopes: a redirect to the client with a code. */
async function authorizeSide(label: string, provider: Provider, instances: readonly Instance[], signInExtra: Record<string, string>): Promise<Side> {
  const jar = await signIn(provider, signInExtra);
  const request = `${provider.authorizePath}?${authorizeQuery(provider, "openid profile", pkcePair().challenge)}`;
  const target = `${provider.base}${request}`;
  const cookie = jar.header(provider.authorizePath);
  const probe = await fetch(target, { redirect: "manual", headers: { cookie } });
  const location = probe.headers.get("location") ?? "";
  if (probe.status < 300 || probe.status > 399 || !location.startsWith(`${provider.redirectUri}?`) || !location.includes("code=")) {
    throw new Error(`${label}: a signed-in authorize answered ${probe.status} ${location || (await probe.text()).slice(0, 200)}, not a code`);
  }
  return {
    label,
    instances,
    // The session cookie is the host's, whatever the port: every process of the side sees the same browser.
    job: async ({ url }) => ({ name: label, protocol: "http1", url: `${url}${request}`, method: "GET", headers: { cookie }, expectStatus: probe.status, expectLocation: "code=" }),
  };
}

/**
 * The refresh_token grant with rotation: every token is single-use, so each
 * connection carries a chain (the next request sends the token the last
 * answer gave), started from a pool minted before the round.
 */
async function refreshSide(label: string, provider: Provider, instances: readonly Instance[], extra: Record<string, string>): Promise<Side> {
  const jar = await signIn(provider, extra);
  const headers = { ...form, authorization: basicAuthorization(provider.clientId, provider.clientSecret) };
  return {
    label,
    instances,
    job: async ({ url }) => ({
      name: label,
      protocol: "http1",
      url: `${url}${provider.tokenPath}`,
      method: "POST",
      headers,
      chain: {
        template: "grant_type=refresh_token&refresh_token={token}",
        tokens: await mintRefreshTokens(provider, jar, connections, extra),
        primerPath: "/.well-known/openid-configuration",
      },
    }),
  };
}

/** node-oidc-provider's one process (see startOidcProvider). */
const peerInstances = (peer: { pid: number; issuer: string }): Instance[] => [{ pid: peer.pid, url: peer.issuer }];

export async function comparison(name: ComparisonName, servers: Servers): Promise<Comparison> {
  // node-oidc-provider grants offline_access only when prompt=consent is asked for.
  const peerConsent = { prompt: "consent" };
  switch (name) {
    case "check_sqlite_vs_connect":
    case "check_pg_vs_connect":
    case "check_grpc_sqlite_vs_connect":
    case "check_grpc_pg_vs_connect": {
      const grpc = name.startsWith("check_grpc");
      const s = await (name.includes("_pg_") ? servers.postgres() : servers.sqlite());
      const echo = await servers.echo();
      const protocol = grpc ? "grpc" : "http1";
      return {
        title: `CheckCertificateStatus, ${grpc ? "gRPC" : "Connect JSON"}, ${name.includes("_pg_") ? "PostgreSQL" : "SQLite"}`,
        shomei: checkSide("shomei", s, s.instances, protocol),
        peer: checkSide("connect-node echo", s, echoInstances(echo, grpc), protocol),
      };
    }
    case "check_ocsp_sqlite_vs_connect": {
      const s = await servers.sqlite();
      const echo = await servers.echo();
      return {
        title: "CheckCertificateStatus by OCSP (a stored answer), Connect JSON, SQLite",
        shomei: checkSide("shomei", s, s.instances, "http1", "CHECK_METHOD_OCSP"),
        peer: checkSide("connect-node echo", s, echoInstances(echo), "http1"),
      };
    }
    case "check_mock_sqlite_vs_connect": {
      const s = await servers.sqliteMock();
      const echo = await servers.echo();
      return {
        title: "CheckCertificateStatus in mock mode, Connect JSON, SQLite",
        shomei: checkSide("shomei (mock)", s, s.instances, "http1"),
        peer: checkSide("connect-node echo", s, echoInstances(echo), "http1"),
      };
    }
    case "verify_vs_bare_crypto":
    case "verify_pg_vs_bare_crypto": {
      const pg = name === "verify_pg_vs_bare_crypto";
      const s = await (pg ? servers.postgres() : servers.sqlite());
      const echo = await servers.echo();
      const bodies = verifyBodies(await servers.ca());
      const side = (label: string, instances: readonly Instance[]): Side => ({
        label,
        instances,
        job: async ({ url }) => ({ name: label, protocol: "http1", url: `${url}${verifyPath}`, method: "POST", headers: { ...json, authorization: `Bearer ${s.token}` }, bodies }),
      });
      return {
        title: `Verify, RSA-2048 PKCS#1 v1.5, ${bodies.length} certificates in turn, identifyUser, ${pg ? "PostgreSQL" : "SQLite"}`,
        shomei: side("shomei", s.instances),
        peer: side("connect-node crypto only", echoInstances(echo)),
      };
    }
    case "par_sqlite_vs_oidc_provider":
    case "par_pg_vs_oidc_provider": {
      const s = await (name === "par_pg_vs_oidc_provider" ? servers.postgres() : servers.sqlite());
      const peer = await servers.oidcProvider();
      return {
        title: `PAR, client_secret_basic, ${name === "par_pg_vs_oidc_provider" ? "PostgreSQL" : "SQLite"}`,
        shomei: parSide("shomei", shomeiProvider(s), s.instances),
        peer: parSide("node-oidc-provider", peerProvider(peer.issuer, peer.clientSecret), peerInstances(peer)),
      };
    }
    case "authorize_vs_oidc_provider": {
      const s = await servers.sqlite();
      const peer = await servers.oidcProvider();
      return {
        title: "authorize, session + prior grant -> code, SQLite",
        shomei: await authorizeSide("shomei", shomeiProvider(s), s.instances, {}),
        peer: await authorizeSide("node-oidc-provider", peerProvider(peer.issuer, peer.clientSecret), peerInstances(peer), peerConsent),
      };
    }
    case "refresh_vs_oidc_provider": {
      const s = await servers.sqlite();
      const peer = await servers.oidcProvider();
      return {
        title: "refresh_token grant, rotation, SQLite",
        shomei: await refreshSide("shomei", shomeiProvider(s), s.instances, {}),
        peer: await refreshSide("node-oidc-provider", peerProvider(peer.issuer, peer.clientSecret), peerInstances(peer), peerConsent),
      };
    }
    case "batch_vs_single":
    case "batch_vs_single_pg": {
      const sqlite = name === "batch_vs_single";
      const s = await (sqlite ? servers.sqlite() : servers.postgres());
      // On SQLite the single calls go to another server of the same build, seeded alike (its own database file), so
      // the two sides can take turns: a server stopped in the middle of a write would hold the other's writes back on
      // one file. On PostgreSQL both sides write the same certificates' chain heads: they share one server and take
      // slices (see measureRound in compare.ts).
      const single = sqlite ? await servers.sqlite10k() : s;
      const headers = { ...json, authorization: `Bearer ${s.token}` };
      const body = JSON.stringify({ certificateIds: s.certificateIds });
      return {
        title: `BatchCheckCertificateStatus of ${s.certificateIds.length} ids vs single calls, ${sqlite ? "SQLite" : "PostgreSQL"}`,
        shomei: {
          label: "batch",
          instances: s.instances,
          per: s.certificateIds.length,
          unit: "ids/s",
          // Enough batches in flight to keep the server busy; 32 of 1,000 ids each would only queue.
          connections: batchConnections,
          job: async ({ url }) => ({ name: "batch", protocol: "http1", url: `${url}${batchPath}`, method: "POST", headers, bodies: [body] }),
        },
        peer: { ...checkSide("single", single, single.instances, "http1"), unit: "ids/s" },
        // A batch call carries 1,000 ids: a second of turns holds only some 20-29 of them, and the batch server's CPU
        // per id moved from one such round to the next by a third (31-45 µs; the key's rounds 3.9-5.5). Rounds of 3 s
        // a side gave 4.6-5.1 in the same hour (docs/bench-method.md, Longer rounds for the batch). On PostgreSQL the
        // two sides take slices of a second, at least two a side, already.
        roundScale: sqlite ? 3 : 1,
      };
    }
    case "check_1m_vs_10k_rows": {
      const small = await servers.sqlite10k();
      const large = await servers.sqlite1m();
      return {
        title: `CheckCertificateStatus, ${largeHistory.toLocaleString("en")} vs 10,000 status records, SQLite`,
        shomei: checkSide(`${largeHistory.toLocaleString("en")} rows`, large, large.instances, "http1"),
        peer: checkSide("10,000 rows", small, small.instances, "http1"),
      };
    }
  }
}


/**
 * The compared servers, each a process of its own: the bare connect-node
 * echo server (bench/servers/connect-echo.ts) and node-oidc-provider
 * (bench/servers/oidc-provider.ts).
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { start, stopProcess } from "../harness.ts";

export interface Peer {
  child: ChildProcess;
  pid: number;
  stop(): Promise<void>;
}

const script = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));

/** The bare connect-node server; its Verify checks certificates against the CA certificate at `caCertificatePath`. */
export async function startConnectEcho(caCertificatePath: string): Promise<Peer & { http1: string; h2c: string }> {
  const { child, output } = await start(process.execPath, ["--import", "tsx", script("connect-echo.ts")], { BENCH_CA_CERTIFICATE: caCertificatePath }, /ready \d+ \d+/);
  const [, http1, h2c] = /ready (\d+) (\d+)/.exec(output)!;
  return { child, pid: child.pid!, http1: `http://127.0.0.1:${http1}`, h2c: `http://127.0.0.1:${h2c}`, stop: () => stopProcess(child) };
}

export async function startOidcProvider(): Promise<Peer & { issuer: string; clientSecret: string }> {
  const clientSecret = randomBytes(24).toString("base64url");
  const { child, output } = await start(process.execPath, ["--import", "tsx", script("oidc-provider.ts")], { BENCH_CLIENT_SECRET: clientSecret }, /ready http:\S+/);
  const issuer = /ready (http:\S+)/.exec(output)![1]!;
  return { child, pid: child.pid!, issuer, clientSecret, stop: () => stopProcess(child) };
}

/**
 * The compared servers, each a process of its own: the bare connect-node
 * echo server (bench/servers/connect-echo.ts) and node-oidc-provider
 * (bench/servers/oidc-provider.ts).
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { processesPerServer, start, stopProcess } from "../harness.ts";

export interface Peer {
  child: ChildProcess;
  pid: number;
  stop(): Promise<void>;
}

const script = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));

/** One process of the bare connect-node server: its Connect (HTTP/1.1) and gRPC (h2c) origins. */
export interface EchoInstance {
  pid: number;
  http1: string;
  h2c: string;
}

/**
 * The bare connect-node server, as many processes as each shomei server has
 * (they share nothing); its Verify checks certificates against the CA
 * certificate at `caCertificatePath`.
 */
export async function startConnectEcho(caCertificatePath: string): Promise<{ instances: EchoInstance[]; stop(): Promise<void> }> {
  const started: Awaited<ReturnType<typeof start>>[] = [];
  for (let i = 0; i < processesPerServer; i++) {
    started.push(await start(process.execPath, ["--import", "tsx", script("connect-echo.ts")], { BENCH_CA_CERTIFICATE: caCertificatePath }, /ready \d+ \d+/));
  }
  const instances = started.map(({ child, output }) => {
    const [, http1, h2c] = /ready (\d+) (\d+)/.exec(output)!;
    return { pid: child.pid!, http1: `http://127.0.0.1:${http1}`, h2c: `http://127.0.0.1:${h2c}` };
  });
  return { instances, stop: async () => void (await Promise.all(started.map(({ child }) => stopProcess(child)))) };
}

/** node-oidc-provider keeps its sessions and grants in memory, so it runs as one process: its rounds all fall on it. */
export async function startOidcProvider(): Promise<Peer & { issuer: string; clientSecret: string }> {
  const clientSecret = randomBytes(24).toString("base64url");
  const { child, output } = await start(process.execPath, ["--import", "tsx", script("oidc-provider.ts")], { BENCH_CLIENT_SECRET: clientSecret }, /ready http:\S+/);
  const issuer = /ready (http:\S+)/.exec(output)![1]!;
  return { child, pid: child.pid!, issuer, clientSecret, stop: () => stopProcess(child) };
}

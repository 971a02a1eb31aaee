import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { openssl } from "./openssl.ts";
import type { OpensslCrlCa } from "./openssl-crl-ca.ts";

export interface ResponderCertificate {
  certificatePath: string;
  keyPath: string;
}

/**
 * A delegated OCSP responder certificate issued by `ca` (RSA 2048), with
 * id-kp-OCSPSigning in its extendedKeyUsage unless `ocspSigning` is false,
 * or signed by `signer` instead of the CA (a CA of the same name).
 */
export function responderCertificate(
  dir: string,
  name: string,
  ca: OpensslCrlCa,
  options: { ocspSigning?: boolean; signer?: OpensslCrlCa; days?: number } = {},
): ResponderCertificate {
  const keyPath = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const certificatePath = path.join(dir, `${name}.pem`);
  const ext = path.join(dir, `${name}.ext`);
  const usage = options.ocspSigning === false ? "clientAuth" : "OCSPSigning";
  writeFileSync(ext, ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature", `extendedKeyUsage=${usage}`].join("\n") + "\n");
  openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", keyPath, "-out", csr, "-subj", `/C=JP/CN=${name}`);
  const signer = options.signer ?? ca;
  openssl(
    "x509", "-req", "-in", csr, "-CA", signer.certificatePath, "-CAkey", signer.keyPath, "-set_serial", String(Date.now()),
    "-days", String(options.days ?? 30), "-extfile", ext, "-out", certificatePath,
  );
  return { certificatePath, keyPath };
}

/** A port nobody listens on now (the OS picks it; the caller binds it soon after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export interface ResponderOptions {
  /** nextUpdate = thisUpdate + this many minutes (`-nmin`); none when unset. */
  nextUpdateMinutes?: number;
}

/**
 * `openssl ocsp -index … -CA … -rsigner … -rkey … -port N` on loopback: a
 * real responder answering from `openssl ca`'s database as it is when it
 * starts (revoke before starting it).
 */
export class OpensslOcspResponder {
  private child: ChildProcess | undefined;
  port = 0;

  constructor(
    private readonly ca: OpensslCrlCa,
    private readonly signer: ResponderCertificate,
    private readonly options: ResponderOptions = {},
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The responder's process id, once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    this.port = await freePort();
    const args = [
      "ocsp", "-index", this.ca.indexPath, "-CA", this.ca.certificatePath, "-rsigner", this.signer.certificatePath,
      "-rkey", this.signer.keyPath, "-port", String(this.port),
      ...(this.options.nextUpdateMinutes !== undefined ? ["-nmin", String(this.options.nextUpdateMinutes)] : []),
    ];
    const child = spawn("openssl", args, { stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      let output = "";
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/waiting for OCSP client connections/i.test(output)) resolve();
      };
      child.stdout!.on("data", onData);
      child.stderr!.on("data", onData);
      child.once("exit", (code) => reject(new Error(`openssl ocsp exited with ${code}: ${output}`)));
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill();
    });
  }
}

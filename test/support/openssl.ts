import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** openssl as the oracle and the signer: every key, certificate and signature in these tests is made by it. */
export function openssl(...args: string[]): string {
  const result = spawnSync("openssl", args, { encoding: "utf8" });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`openssl ${args.join(" ")} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

export function pemToDer(pem: string): Buffer {
  const body = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/.exec(pem)?.[1];
  if (!body) throw new Error("no certificate in PEM");
  return Buffer.from(body.replace(/\s/g, ""), "base64");
}

export type Hash = "sha256" | "sha384" | "sha512";

/** A document in a directory, and how to sign it with openssl and hash it the way the caller of Verify would. */
export class Signer {
  private counter = 0;
  constructor(private readonly dir: string) {}

  file(name: string, content: string | Uint8Array): string {
    const file = path.join(this.dir, `${this.counter++}-${name}`);
    writeFileSync(file, content);
    return file;
  }

  digest(document: string, hash: Hash): Buffer {
    return createHash(hash).update(document).digest();
  }

  /** `openssl dgst -<hash> -sign key [-sigopt …] document`. */
  sign(privateKeyPem: string, document: string, hash: Hash, ...sigopts: string[]): Buffer {
    const key = this.file("key.pem", privateKeyPem);
    const data = this.file("document.txt", document);
    const out = this.file("signature.bin", "");
    openssl("dgst", `-${hash}`, ...sigopts.flatMap((o) => ["-sigopt", o]), "-sign", key, "-out", out, data);
    return readFileSync(out);
  }
}

/**
 * A CA made by openssl, for the trust anchors file: it issues end-entity
 * certificates with the given policy and key usage, RSA 2048 keys.
 */
export class OpensslCa {
  readonly certificatePath: string;
  private readonly keyPath: string;
  private serial = 1;

  constructor(private readonly dir: string, name: string) {
    this.keyPath = path.join(dir, `${name}.key`);
    this.certificatePath = path.join(dir, `${name}.pem`);
    openssl(
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", this.keyPath, "-out", this.certificatePath, "-days", "3650",
      "-subj", `/C=JP/O=shomei test/CN=${name}`,
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    );
  }

  /** A leaf certificate (DER) and its private key (PEM). */
  issue(name: string, policyOid: string, keyUsage: string): { der: Buffer; privateKeyPem: string } {
    const key = path.join(this.dir, `${name}.key`);
    const csr = path.join(this.dir, `${name}.csr`);
    const cert = path.join(this.dir, `${name}.pem`);
    const ext = path.join(this.dir, `${name}.ext`);
    writeFileSync(ext, [`basicConstraints=critical,CA:FALSE`, `keyUsage=critical,${keyUsage}`, `certificatePolicies=critical,${policyOid}`].join("\n"));
    openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", `/C=JP/CN=${name}`);
    openssl(
      "x509", "-req", "-in", csr, "-CA", this.certificatePath, "-CAkey", this.keyPath, "-set_serial", String(this.serial++),
      "-days", "30", "-extfile", ext, "-out", cert,
    );
    return { der: pemToDer(readFileSync(cert, "utf8")), privateKeyPem: readFileSync(key, "utf8") };
  }
}

/** A self-signed certificate no anchor vouches for. */
export function selfSigned(dir: string, name: string): { der: Buffer; privateKeyPem: string } {
  const key = path.join(dir, `${name}.key`);
  const cert = path.join(dir, `${name}.pem`);
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "30", "-subj", `/C=JP/CN=${name}`);
  return { der: pemToDer(readFileSync(cert, "utf8")), privateKeyPem: readFileSync(key, "utf8") };
}

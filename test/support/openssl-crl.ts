import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { openssl, pemToDer } from "./openssl.ts";

export type IssuerKey = "rsa:2048" | "ec:P-256" | "ec:P-384";

export interface OpensslCrlCaOptions {
  key?: IssuerKey;
  /** `-subj` of the CA certificate; defaults to /C=JP/O=shomei test/CN=<name>. */
  subject?: string;
  /** keyUsage of the CA certificate; null leaves the extension out. */
  keyUsage?: string | null;
}

export interface GencrlOptions {
  /** Lines of the crl_extensions section (openssl x509v3_config syntax); none gives a v1 list when no entry has a reason. */
  extensions?: string[];
  /** `-crldays` (default 7). */
  days?: number;
  md?: "sha256" | "sha384" | "sha512";
  sigopts?: string[];
  /**
   * false: no crlnumber file, so no cRLNumber extension (with no other extension: a v1 list). A number: the list's
   * cRLNumber, whatever lists the CA made before (the ones after count on from it).
   */
  crlNumber?: boolean | bigint;
}

/**
 * A CA run by `openssl ca`: its database (index.txt) takes revocations with
 * `-revoke … -crl_reason`, and `-gencrl` writes the list. Certificates to
 * revoke are made from one EC key with the serials asked for.
 */
export class OpensslCrlCa {
  readonly certificatePath: string;
  readonly certificateDer: Buffer;
  private readonly keyPath: string;
  private readonly home: string;
  private leafCsr: string | undefined;

  constructor(dir: string, readonly name: string, options: OpensslCrlCaOptions = {}) {
    this.home = path.join(dir, name);
    mkdirSync(this.home, { recursive: true });
    writeFileSync(path.join(this.home, "index.txt"), "");
    writeFileSync(path.join(this.home, "crlnumber"), "1000\n");
    this.keyPath = path.join(this.home, "ca.key");
    this.certificatePath = path.join(this.home, "ca.pem");
    const key = options.key ?? "rsa:2048";
    const keyArgs = key === "rsa:2048" ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", `ec_paramgen_curve:${key.slice(3)}`];
    const keyUsage = options.keyUsage === undefined ? "critical,keyCertSign,cRLSign" : options.keyUsage;
    openssl(
      "req", "-x509", ...keyArgs, "-nodes", "-keyout", this.keyPath, "-out", this.certificatePath, "-days", "3650",
      "-subj", options.subject ?? `/C=JP/O=shomei test/CN=${name}`,
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "subjectKeyIdentifier=hash",
      ...(keyUsage === null ? [] : ["-addext", `keyUsage=${keyUsage}`]),
    );
    this.certificateDer = pemToDer(readFileSync(this.certificatePath, "utf8"));
  }

  /** `openssl ca -revoke` of a certificate with this serial (hex), with `-crl_reason` when given. */
  revoke(serialHex: string, reason?: string): void {
    const certificate = this.certificate(serialHex);
    openssl("ca", "-config", this.config([]), "-revoke", certificate, ...(reason ? ["-crl_reason", reason] : []));
  }

  /** Sets the revocation date of a revoked serial in the database (UTCTime text: openssl ca takes no other). */
  setRevocationDate(serialHex: string, time: string): void {
    const file = path.join(this.home, "index.txt");
    const lines = readFileSync(file, "utf8").split("\n").map((line) => {
      const fields = line.split("\t");
      if (fields[3] !== serialHex.toUpperCase()) return line;
      const [, ...rest] = fields[2]!.split(",");
      fields[2] = [time, ...rest].join(",");
      return fields.join("\t");
    });
    writeFileSync(file, lines.join("\n"));
  }

  /** `openssl ca -gencrl`, as DER. */
  gencrl(options: GencrlOptions = {}): Buffer {
    const out = path.join(this.home, "crl.pem");
    if (typeof options.crlNumber === "bigint") {
      const hex = options.crlNumber.toString(16);
      writeFileSync(path.join(this.home, "crlnumber"), `${hex.length % 2 ? "0" : ""}${hex}\n`); // whole octets, as openssl reads it
    }
    openssl(
      "ca", "-config", this.config(options.extensions ?? [], options.crlNumber !== false), "-gencrl", "-out", out, "-crldays", String(options.days ?? 7),
      "-md", options.md ?? "sha256", ...(options.sigopts ?? []).flatMap((option) => ["-sigopt", option]),
    );
    const der = path.join(this.home, "crl.der");
    openssl("crl", "-in", out, "-outform", "DER", "-out", der);
    return readFileSync(der);
  }

  private certificate(serialHex: string): string {
    if (!this.leafCsr) {
      this.leafCsr = path.join(this.home, "leaf.csr");
      openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path.join(this.home, "leaf.key"), "-out", this.leafCsr, "-subj", "/CN=leaf");
    }
    const out = path.join(this.home, `leaf-${serialHex}.pem`);
    openssl("x509", "-req", "-in", this.leafCsr, "-CA", this.certificatePath, "-CAkey", this.keyPath, "-set_serial", `0x${serialHex}`, "-days", "30", "-out", out);
    return out;
  }

  private config(extensions: string[], crlNumber = true): string {
    const file = path.join(this.home, "ca.cnf");
    writeFileSync(
      file,
      [
        "[ ca ]", "default_ca = test", "[ test ]", `database = ${this.home}/index.txt`, `certificate = ${this.certificatePath}`,
        `private_key = ${this.keyPath}`, "default_md = sha256", ...(crlNumber ? [`crlnumber = ${this.home}/crlnumber`] : []), "policy = anything",
        ...(extensions.length > 0 ? ["crl_extensions = crlext"] : []),
        "[ anything ]", "commonName = optional",
        "[ crlext ]", ...extensions,
        "[ idp ]", "fullname = URI:http://crl.shomei.test/a.crl, URI:http://crl.shomei.test/b.crl",
      ].join("\n"),
    );
    return file;
  }
}

export interface OpensslCrlEntry {
  /** Lowercase hex, as `openssl crl -text` prints it. */
  serialHex: string;
  revokedAt: number;
  /** RFC 5280 code; 0 when the entry has no reasonCode. */
  reason: number;
}

const reasonNames: Record<string, number> = {
  Unspecified: 0,
  "Key Compromise": 1,
  "CA Compromise": 2,
  "Affiliation Changed": 3,
  Superseded: 4,
  "Cessation Of Operation": 5,
  "Certificate Hold": 6,
  "Remove From CRL": 8,
  "Privilege Withdrawn": 9,
  "AA Compromise": 10,
};
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** openssl's "Nov 23 01:34:19 2026 GMT" as epoch milliseconds. */
export function opensslDate(text: string): number {
  const match = /^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{4}) GMT$/.exec(text.trim());
  if (!match) throw new Error(`not an openssl date: ${text}`);
  const [, month, day, hour, minute, second, year] = match;
  return Date.UTC(Number(year), months.indexOf(month!), Number(day), Number(hour), Number(minute), Number(second));
}

/** What `openssl crl -text` says about a DER list: dates, number and entries. */
export function opensslCrlText(der: Uint8Array, dir: string): { thisUpdate: number; nextUpdate: number; crlNumber: bigint | undefined; entries: OpensslCrlEntry[] } {
  const file = path.join(dir, "oracle.der");
  writeFileSync(file, der);
  const text = openssl("crl", "-inform", "DER", "-in", file, "-noout", "-text");
  const number = /X509v3 CRL Number: *\n\s+(\d+)\n/.exec(text)?.[1];
  const section = text.split("Revoked Certificates:")[1]?.split("Signature Algorithm:")[0] ?? "";
  const entries = section
    .split("Serial Number: ")
    .slice(1)
    .map((block) => {
      const lines = block.split("\n").map((line) => line.trim());
      const reasonAt = lines.indexOf("X509v3 CRL Reason Code:");
      const reason = reasonAt >= 0 ? reasonNames[lines[reasonAt + 1]!] : 0;
      if (reason === undefined) throw new Error(`unknown reason ${lines[reasonAt + 1]}`);
      const date = lines.find((line) => line.startsWith("Revocation Date: "))!.slice("Revocation Date: ".length);
      return { serialHex: lines[0]!.toLowerCase(), revokedAt: opensslDate(date), reason };
    });
  return {
    thisUpdate: opensslDate(/Last Update: (.+)\n/.exec(text)![1]!),
    nextUpdate: opensslDate(/Next Update: (.+)\n/.exec(text)![1]!),
    crlNumber: number === undefined ? undefined : BigInt(number),
    entries,
  };
}

/** `openssl crl -CAfile` over a DER list: true when it prints "verify OK" (it exits 0 on "verify failure" too). */
export function opensslVerifiesCrl(der: Uint8Array, caCertificatePath: string, dir: string): boolean {
  const file = path.join(dir, "verify.der");
  writeFileSync(file, der);
  const result = spawnSync("openssl", ["crl", "-inform", "DER", "-in", file, "-noout", "-CAfile", caCertificatePath], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`openssl crl failed: ${result.stderr}`);
  return result.stderr.trim() === "verify OK";
}

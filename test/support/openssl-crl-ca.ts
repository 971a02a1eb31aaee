import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { openssl, pemToDer } from "./openssl.ts";

/** openssl's time form for -crl_lastupdate / -crl_nextupdate. */
function opensslTime(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, "").replace(/\.\d+Z$/, "Z");
}

export interface IssuedLeaf {
  der: Buffer;
  pemPath: string;
  /** The leaf's private key, PEM. */
  keyPath: string;
  /** Canonical lowercase hex, as the service stores it. */
  serialHex: string;
}

export interface CrlOptions {
  /** thisUpdate; default now, in whole seconds. */
  thisUpdate?: number;
  /** nextUpdate; default thisUpdate + 1 day. */
  nextUpdate?: number;
  /** Lines of an extension section for the list (openssl x509v3 config syntax). */
  extensions?: string[];
}

/**
 * A CA run with `openssl ca`: its own index, serial and crlnumber files, so
 * revocations (`-revoke -crl_reason …`) and lists (`-gencrl`) are openssl's.
 * Leaves are P-256 (quick to make), or RSA-2048 as a card's, with the card
 * signature policy.
 */
export class OpensslCrlCa {
  readonly certificatePath: string;
  readonly keyPath: string;
  /** openssl ca's database, which `openssl ocsp -index` answers from. */
  readonly indexPath: string;
  private readonly config: string;
  private counter = 0;

  /** Two CAs made with the same name have the same subject and different keys: one can impersonate the other. */
  constructor(private readonly dir: string, readonly name: string) {
    mkdirSync(path.join(dir, "newcerts"), { recursive: true });
    writeFileSync(path.join(dir, "index.txt"), "");
    writeFileSync(path.join(dir, "serial"), "1000\n");
    writeFileSync(path.join(dir, "crlnumber"), "01\n");
    this.certificatePath = path.join(dir, "ca.pem");
    this.keyPath = path.join(dir, "ca.key");
    this.indexPath = path.join(dir, "index.txt");
    this.config = path.join(dir, "ca.cnf");
    writeFileSync(
      this.config,
      [
        "[ ca ]", "default_ca = ca_default",
        "[ ca_default ]",
        `dir = ${dir}`, "database = $dir/index.txt", "new_certs_dir = $dir/newcerts", "certificate = $dir/ca.pem",
        "private_key = $dir/ca.key", "serial = $dir/serial", "crlnumber = $dir/crlnumber", "default_md = sha256",
        "default_days = 30", "default_crl_days = 1", "policy = policy_any", "unique_subject = no", "copy_extensions = none",
        "[ policy_any ]", "commonName = supplied",
      ].join("\n") + "\n",
    );
    const subject = `/C=JP/O=shomei test/CN=${name}`;
    openssl(
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path.join(dir, "ca.key"), "-out", this.certificatePath, "-days", "3650",
      "-subj", subject, "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
      "-addext", "subjectKeyIdentifier=hash",
    );
  }

  get der(): Buffer {
    return pemToDer(readFileSync(this.certificatePath, "utf8"));
  }

  private file(name: string, content: string): string {
    const file = path.join(this.dir, `${this.counter++}-${name}`);
    writeFileSync(file, content);
    return file;
  }

  /**
   * A signature certificate naming `crlUrl` as its CRL distribution point
   * (none when empty) and `ocspUrl`, when given, as its OCSP responder.
   */
  issue(
    name: string,
    crlUrl: string,
    policyOid = "1.2.392.200149.8.5.1.1.20",
    ocspUrl?: string,
    validity?: { notBefore: number; notAfter: number },
    key: "p256" | "rsa2048" = "p256",
  ): IssuedLeaf {
    const keyPath = path.join(this.dir, `${name}.key`);
    const csr = path.join(this.dir, `${name}.csr`);
    const pemPath = path.join(this.dir, `${name}.pem`);
    const ext = this.file(`${name}.ext`, [
      "[ leaf ]", "basicConstraints = critical,CA:FALSE", "keyUsage = critical,digitalSignature,nonRepudiation",
      `certificatePolicies = critical,${policyOid}`,
      ...(crlUrl ? [`crlDistributionPoints = URI:${crlUrl}`] : []),
      ...(ocspUrl ? [`authorityInfoAccess = OCSP;URI:${ocspUrl}`] : []),
    ].join("\n") + "\n");
    const newKey = key === "rsa2048" ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"];
    openssl("req", "-new", ...newKey, "-nodes", "-keyout", keyPath, "-out", csr, "-subj", `/C=JP/CN=${name}`);
    const dates = validity ? ["-startdate", opensslTime(validity.notBefore), "-enddate", opensslTime(validity.notAfter)] : [];
    openssl("ca", "-batch", "-config", this.config, "-in", csr, "-out", pemPath, "-notext", "-extfile", ext, "-extensions", "leaf", ...dates);
    const serial = openssl("x509", "-in", pemPath, "-noout", "-serial").trim().replace(/^serial=/, "").toLowerCase().replace(/^(00)+/, "");
    return { der: pemToDer(readFileSync(pemPath, "utf8")), pemPath, keyPath, serialHex: serial };
  }

  /** `openssl ca -revoke`; returns the revocation time openssl recorded (epoch ms). */
  revoke(leaf: IssuedLeaf, reason: "keyCompromise" | "affiliationChanged" | "certificateHold" | "superseded" | "unspecified"): number {
    const hold = reason === "certificateHold" ? ["-crl_hold", "holdInstructionReject"] : ["-crl_reason", reason];
    openssl("ca", "-config", this.config, "-revoke", leaf.pemPath, ...hold);
    const line = readFileSync(path.join(this.dir, "index.txt"), "utf8")
      .split("\n")
      .find((l) => l.startsWith("R\t") && l.split("\t")[3]!.toLowerCase().replace(/^(00)+/, "") === leaf.serialHex);
    const stamp = line!.split("\t")[2]!.split(",")[0]!; // YYMMDDHHMMSSZ
    const [yy, mo, dd, hh, mi, ss] = stamp.match(/\d\d/g)!.map(Number) as [number, number, number, number, number, number];
    return Date.UTC(2000 + yy, mo - 1, dd, hh, mi, ss);
  }

  /** Sets the cRLNumber the next list gets. */
  setNextCrlNumber(n: number): void {
    writeFileSync(path.join(this.dir, "crlnumber"), `${n.toString(16).padStart(2, "0")}\n`);
  }

  /** `openssl ca -gencrl` as DER, with its thisUpdate. */
  gencrl(options: CrlOptions = {}): { der: Buffer; thisUpdate: number } {
    const thisUpdate = options.thisUpdate ?? Math.floor(Date.now() / 1000) * 1000;
    const nextUpdate = options.nextUpdate ?? thisUpdate + 24 * 3600 * 1000;
    const pem = this.file("crl.pem", "");
    const args = ["ca", "-config", this.config, "-gencrl", "-out", pem, "-crl_lastupdate", opensslTime(thisUpdate), "-crl_nextupdate", opensslTime(nextUpdate)];
    if (options.extensions) {
      const extFile = this.file("crl.ext", ["[ crl_ext ]", ...options.extensions].join("\n") + "\n");
      // -crlexts reads the section from the main config: append it to a copy.
      const config = this.file("ca-crl.cnf", readFileSync(this.config, "utf8") + readFileSync(extFile, "utf8"));
      args[2] = config;
      args.push("-crlexts", "crl_ext");
    }
    openssl(...args);
    const der = this.file("crl.der", "");
    openssl("crl", "-in", pem, "-outform", "DER", "-out", der);
    return { der: readFileSync(der), thisUpdate };
  }
}

/**
 * The run's certification authority, served as a real one: a CA made with
 * openssl (`openssl ca`), its CRL published over loopback HTTP, and
 * `openssl ocsp` answering for it. shomei's benchmarked servers run in
 * production mode with this CA as their one trust anchor, so every check goes
 * through the CRL or OCSP path production runs, and the Verify peer checks
 * chains against the same CA key.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CrlHttpServer } from "../../test/support/crl-http-server.ts";
import { OpensslCrlCa, type IssuedLeaf } from "../../test/support/openssl-crl-ca.ts";
import { OpensslOcspResponder, responderCertificate } from "../../test/support/openssl-ocsp.ts";
import { endsWithBenchmark, temporaryDirectory } from "../harness.ts";

/** The card signature certificate's policy: leaves are issued with it, the anchor file maps it to the type. */
const policy = "1.2.392.200149.8.5.1.1.20";

export interface BenchLeaf extends IssuedLeaf {
  privateKeyPem: string;
}

export class BenchCa {
  readonly dir = temporaryDirectory("shomei-bench-ca-");
  private readonly ca = new OpensslCrlCa(this.dir, "shomei bench CA");
  private readonly http = new CrlHttpServer();
  private readonly responder = new OpensslOcspResponder(this.ca, responderCertificate(this.dir, "responder", this.ca), { nextUpdateMinutes: 24 * 60 });
  /** The anchors file that names this CA (SHOMEI_TRUST_ANCHORS_FILE). */
  readonly anchorsFile = path.join(this.dir, "anchors.json");
  readonly certificatePath = this.ca.certificatePath;
  private readonly leaves: BenchLeaf[] = [];
  private forgetResponder: () => void = () => undefined;

  /**
   * Issues `count` RSA-2048 signature certificates (JPKI cards sign with
   * RSA), revokes one in ten, publishes the CRL and starts the responder
   * (which reads the CA's index as it starts). The leaves name an unused OCSP
   * URL: the anchors file sends shomei to the responder.
   */
  async start(count: number): Promise<void> {
    await this.http.start();
    const crlUrl = this.http.url("/ca.crl");
    for (let i = 0; i < count; i++) {
      const leaf = this.ca.issue(`leaf${i}`, crlUrl, policy, "http://127.0.0.1:9/ocsp", undefined, "rsa2048");
      this.leaves.push({ ...leaf, privateKeyPem: readFileSync(leaf.keyPath, "utf8") });
    }
    for (const leaf of this.leaves.filter((_, i) => i % 10 === 9)) this.ca.revoke(leaf, "keyCompromise");
    this.forgetResponder = endsWithBenchmark(() => this.responder.pid);
    await this.responder.start();
    this.http.publish("/ca.crl", this.ca.gencrl().der);
    const issues = [{ type: "jpki_card_digital_signature", policyOid: policy, keyUsage: ["digitalSignature", "nonRepudiation"] }];
    writeFileSync(this.anchorsFile, JSON.stringify({ anchors: [{ name: "shomei bench CA", certificates: this.certificatePath, issues, ocspUrls: [this.responder.url] }] }));
  }

  /** The good (not revoked) leaves. */
  get goodLeaves(): BenchLeaf[] {
    return this.leaves.filter((_, i) => i % 10 !== 9);
  }

  async stop(): Promise<void> {
    await this.responder.stop();
    this.forgetResponder();
    await this.http.close();
  }
}

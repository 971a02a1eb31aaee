import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.ts";
import type { CheckMethod, StoredCertificate } from "../../src/domain/certificates/model.ts";
import { MethodSelectingSource } from "../../src/domain/certificates/method-selecting-source.ts";
import { BatchFirstSource, sourceUnavailable, type RevocationAnswer, type SingleMethodSource } from "../../src/domain/certificates/revocation-source.ts";

/**
 * Method selection over two scripted single-method sources: which method a
 * certificate is checked by, fallback in order, and one batch call per
 * method however many certificates there are.
 */
class ScriptedSource extends BatchFirstSource implements SingleMethodSource {
  calls: { ids: string[]; preferred: CheckMethod | undefined }[] = [];
  constructor(
    readonly method: CheckMethod,
    private readonly offered: (c: StoredCertificate) => boolean,
    private readonly down: (c: StoredCertificate) => boolean,
  ) {
    super();
  }
  offers(certificate: StoredCertificate): boolean {
    return this.offered(certificate);
  }
  async checkMany(certificates: readonly StoredCertificate[], preferred: CheckMethod | undefined): Promise<(RevocationAnswer | DomainError)[]> {
    this.calls.push({ ids: certificates.map((c) => c.id), preferred });
    return certificates.map((c) =>
      this.down(c) ? sourceUnavailable(`${this.method} down`) : { status: "good", method: this.method, sourceUpdatedAt: 1, revokedAt: null, revokedReason: null },
    );
  }
}

/** A certificate whose id says what its issuer offers ("crl", "ocsp", "both", "none") and which methods are down ("-crl-down"…). */
const certificate = (id: string) => ({ id }) as StoredCertificate;
const has = (word: string) => (c: StoredCertificate) => c.id.split("-").includes(word);

function sources() {
  const crl = new ScriptedSource("crl", (c) => has("crl")(c) || has("both")(c), (c) => c.id.includes("crldown"));
  const ocsp = new ScriptedSource("ocsp", (c) => has("ocsp")(c) || has("both")(c), (c) => c.id.includes("ocspdown"));
  return { crl, ocsp };
}

const outcome = (a: RevocationAnswer | DomainError) => (a instanceof DomainError ? `${a.code}: ${a.message}` : a.method);

describe("MethodSelectingSource", () => {
  it("unset: the first offered method in order, the next when it is unavailable, one batch call per method", async () => {
    const { crl, ocsp } = sources();
    const selecting = new MethodSelectingSource([crl, ocsp]);
    const batch = ["1-both", "2-both-crldown", "3-crl", "4-ocsp", "5-both-crldown-ocspdown", "6-none", "7-crl-crldown"].map(certificate);
    const answers = await selecting.checkMany(batch, undefined, 0);
    expect(answers.map(outcome)).toEqual([
      "crl",
      "ocsp",
      "crl",
      "ocsp",
      "source_unavailable: CRL: crl down; OCSP: ocsp down",
      "source_unavailable: the certificate's issuer offers neither a CRL nor an OCSP responder",
      "source_unavailable: crl down",
    ]);
    expect(crl.calls).toEqual([{ ids: ["1-both", "2-both-crldown", "3-crl", "5-both-crldown-ocspdown", "7-crl-crldown"], preferred: "crl" }]);
    expect(ocsp.calls).toEqual([{ ids: ["2-both-crldown", "4-ocsp", "5-both-crldown-ocspdown"], preferred: "ocsp" }]);
  });

  it("the configured order decides which method answers first", async () => {
    const { crl, ocsp } = sources();
    const answers = await new MethodSelectingSource([ocsp, crl]).checkMany(["1-both", "2-both-ocspdown"].map(certificate), undefined, 0);
    expect(answers.map(outcome)).toEqual(["ocsp", "crl"]);
  });

  it("named: that method only, no fallback; not offered is check_method_not_offered naming what is", async () => {
    const { crl, ocsp } = sources();
    const selecting = new MethodSelectingSource([crl, ocsp]);
    const answers = await selecting.checkMany(["1-both", "2-crl", "3-both-ocspdown", "4-none"].map(certificate), "ocsp", 0);
    expect(answers.map(outcome)).toEqual([
      "ocsp",
      "check_method_not_offered: the revocation source of this certificate does not offer OCSP; it offers CRL",
      "source_unavailable: ocsp down",
      "check_method_not_offered: the revocation source of this certificate does not offer OCSP; it offers none",
    ]);
    expect(crl.calls).toEqual([]);
    await expect(selecting.check(certificate("2-crl"), "ocsp", 0)).rejects.toMatchObject({ code: "check_method_not_offered", field: "check_method" });
    await expect(selecting.check(certificate("2-crl"), "crl", 0)).resolves.toMatchObject({ method: "crl", status: "good" });
  });
});

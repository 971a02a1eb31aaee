import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { id_pkix_ocsp_nonce, OCSPRequest } from "@peculiar/asn1-ocsp";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { Certificate } from "@peculiar/asn1-x509";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.ts";
import type { StoredCertificate } from "../../src/domain/certificates/model.ts";
import { fetchOcsp } from "../../src/adapters/ocsp/fetch-ocsp.ts";
import type { OcspResponseKey, OcspResponseStore, StoredOcspResponse } from "../../src/domain/certificates/ocsp/ocsp-response-store.ts";
import { OcspResponses, type OcspFetchReport, type OcspIssuer, type OcspSettings } from "../../src/domain/certificates/ocsp/ocsp-responses.ts";
import { OcspRevocationSource } from "../../src/domain/certificates/ocsp/ocsp-revocation-source.ts";
import { hashAlgorithmOids } from "../../src/domain/certificates/ocsp/ocsp-request.ts";
import type { RevocationAnswer } from "../../src/domain/certificates/revocation-source.ts";
import { openDatabase, type Database } from "../../src/storage/database.ts";
import { migrateToLatest } from "../../src/storage/migrate.ts";
import { OcspResponsesRepository } from "../../src/storage/ocsp-responses-repository.ts";
import { databaseTargets, type ScratchDatabase } from "../support/databases.ts";
import { OcspProxy } from "../support/ocsp-proxy.ts";
import { OpensslCrlCa, type IssuedLeaf } from "../support/openssl-crl-ca.ts";
import { OpensslOcspResponder, responderCertificate } from "../support/openssl-ocsp.ts";

/**
 * The OCSP source against `openssl ocsp` on loopback, through a counting
 * proxy that can also rewrite requests or answer for the responder, over the
 * real repository (SQLite; the service tests run PostgreSQL too), on a clock
 * the test can move forward.
 */
const [sqlite] = await databaseTargets();
const minute = 60_000;

/** The repository, counting reads. */
class CountingStore implements OcspResponseStore {
  reads = 0;
  constructor(private readonly inner: OcspResponseStore) {}
  findMany(keys: readonly OcspResponseKey[]): Promise<Map<string, StoredOcspResponse>> {
    this.reads++;
    return this.inner.findMany(keys);
  }
  save(response: StoredOcspResponse): Promise<void> {
    return this.inner.save(response);
  }
  forget(key: OcspResponseKey): Promise<void> {
    return this.inner.forget(key);
  }
}

function rewriteRequest(der: Uint8Array, change: (request: OCSPRequest) => void): Uint8Array {
  const request = AsnConvert.parse(der, OCSPRequest);
  change(request);
  return new Uint8Array(AsnConvert.serialize(request));
}

describe("OCSP source against openssl ocsp", () => {
  let dir: string;
  let scratch: ScratchDatabase;
  let database: Database;
  let ca: OpensslCrlCa;
  let impostor: OpensslCrlCa;
  let issuer: OcspIssuer;
  const responders: OpensslOcspResponder[] = [];
  const proxies: OcspProxy[] = [];
  let good: IssuedLeaf;
  let revoked: IssuedLeaf;
  let revokedAt: number;
  let onHold: IssuedLeaf;
  let main: OpensslOcspResponder;
  let withoutNextUpdate: OpensslOcspResponder;
  let withoutEku: OpensslOcspResponder;
  let otherSigner: OpensslOcspResponder;
  let shortLived: OpensslOcspResponder;
  let offset = 0;
  const clock = () => Date.now() + offset;

  async function responder(...args: ConstructorParameters<typeof OpensslOcspResponder>): Promise<OpensslOcspResponder> {
    const started = new OpensslOcspResponder(...args);
    await started.start();
    responders.push(started);
    return started;
  }

  async function proxy(upstream: string | undefined): Promise<OcspProxy> {
    const started = new OcspProxy(upstream);
    await started.start();
    proxies.push(started);
    return started;
  }

  /** A source of its own (nothing remembered in memory) on the shared scratch database. */
  function source(settings: Partial<OcspSettings> = {}, store: OcspResponseStore = new OcspResponsesRepository(database)) {
    const reports: OcspFetchReport[] = [];
    const responses = new OcspResponses(
      new Map([[issuer.id, issuer]]),
      store,
      fetchOcsp,
      { timeoutMs: 2000, nonceBytes: 0, withoutNextUpdateMs: 5 * minute, ...settings },
      clock,
      (r) => reports.push(r),
    );
    return { source: new OcspRevocationSource(responses), responses, reports };
  }

  let serial = 0x7000;
  /** A certificate of the CA as the registry stores it, asking the responder at `url`; a serial of its own unless a leaf is given. */
  function certificate(url: string | undefined, leaf?: IssuedLeaf): StoredCertificate {
    const serialNumber = leaf?.serialHex ?? (serial++).toString(16);
    return {
      id: `00000000-0000-4000-8000-${serialNumber.padStart(12, "0")}`, accountId: "a", userId: "u", type: "jpki_card_digital_signature",
      origin: "verified", serialNumber, issuer: ca.name, notBefore: 0, notAfter: Date.now() + 3600_000,
      fingerprintSha256: createHash("sha256").update(serialNumber).digest("hex"), crlDistributionPoints: [],
      ocspUrls: url ? [url] : [], trustAnchor: issuer.id, createdAt: 0,
    };
  }

  async function unavailable(promise: Promise<RevocationAnswer>): Promise<string> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe("source_unavailable");
    return (error as DomainError).message;
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "shomei-ocsp-"));
    mkdirSync(path.join(dir, "ca"));
    mkdirSync(path.join(dir, "impostor"));
    ca = new OpensslCrlCa(path.join(dir, "ca"), "test OCSP CA");
    impostor = new OpensslCrlCa(path.join(dir, "impostor"), "test OCSP CA");
    issuer = { id: "sha256:ocsp-test", name: "test OCSP CA", certificateDer: ca.der, ocspUrls: undefined };
    good = ca.issue("good", "");
    revoked = ca.issue("revoked", "");
    onHold = ca.issue("on-hold", "");
    revokedAt = ca.revoke(revoked, "keyCompromise");
    ca.revoke(onHold, "certificateHold");
    const delegated = responderCertificate(dir, "responder", ca);
    main = await responder(ca, delegated, { nextUpdateMinutes: 60 });
    withoutNextUpdate = await responder(ca, delegated);
    withoutEku = await responder(ca, responderCertificate(dir, "no-eku", ca, { ocspSigning: false }), { nextUpdateMinutes: 60 });
    otherSigner = await responder(ca, responderCertificate(dir, "impostor-responder", ca, { signer: impostor }), { nextUpdateMinutes: 60 });
    shortLived = await responder(ca, delegated, { nextUpdateMinutes: 1 });
    scratch = await sqlite!.create();
    database = await openDatabase(scratch.url);
    await migrateToLatest(database);
  });

  // Each test its own anchor id, so that no test finds another's stored responses.
  let test = 0;
  beforeEach(() => {
    issuer = { ...issuer, id: `sha256:ocsp-test-${test++}` };
  });

  afterAll(async () => {
    for (const p of proxies) await p.close();
    for (const r of responders) await r.stop();
    await database?.close();
    await scratch?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("good, revoked with openssl's reason and time, on hold, and unknown, each as the responder says", async () => {
    const { source: ocsp } = source();
    const before = Date.now();
    const [goodAnswer, revokedAnswer, holdAnswer, unknownAnswer] = await ocsp.checkMany(
      [certificate(main.url, good), certificate(main.url, revoked), certificate(main.url, onHold), certificate(main.url)],
      "ocsp",
      clock(),
    );
    expect(goodAnswer).toEqual({ status: "good", method: "ocsp", sourceUpdatedAt: expect.any(Number), revokedAt: null, revokedReason: null });
    expect(revokedAnswer).toEqual({ status: "revoked", method: "ocsp", sourceUpdatedAt: expect.any(Number), revokedAt, revokedReason: 1 });
    expect(holdAnswer).toMatchObject({ status: "revoked", revokedReason: 6 });
    expect(unknownAnswer).toMatchObject({ status: "unknown", method: "ocsp", revokedAt: null, revokedReason: null });
    // sourceUpdatedAt is the response's producedAt: made during this check (openssl writes whole seconds).
    const produced = (goodAnswer as RevocationAnswer).sourceUpdatedAt;
    expect(produced).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(produced).toBeLessThanOrEqual(Date.now());
  });

  it("short requests go by GET, and two checks before nextUpdate make one request, by any instance on the database", async () => {
    const counted = await proxy(main.url);
    const first = source();
    const leaf = certificate(counted.url, good);
    expect((await first.source.check(leaf, undefined, clock())).status).toBe("good");
    expect((await first.source.check(leaf, "ocsp", clock())).status).toBe("good");
    // Another instance (nothing in memory) answers from the stored response.
    const second = source();
    expect((await second.source.check(leaf, undefined, clock())).status).toBe("good");
    expect(counted.requests).toBe(1);
    expect(counted.methods).toEqual(["GET"]);
    expect(first.reports.map((r) => r.outcome)).toEqual(["fetched"]);
  });

  it("concurrent checks of one certificate make one request; a batch reads the database once however many it holds", async () => {
    const counted = await proxy(main.url);
    const store = new CountingStore(new OcspResponsesRepository(database));
    const { source: ocsp } = source({}, store);
    const batch = [good, revoked, onHold].map((leaf) => certificate(counted.url, leaf));
    const [a, b] = await Promise.all([ocsp.checkMany(batch, undefined, clock()), ocsp.checkMany(batch, undefined, clock())]);
    expect(a.map((x) => (x as RevocationAnswer).status)).toEqual(["good", "revoked", "revoked"]);
    expect(b).toEqual(a);
    expect(counted.requests).toBe(3);
    expect(store.reads).toBe(2);
    await ocsp.checkMany(batch, undefined, clock());
    expect(counted.requests).toBe(3);
    expect(store.reads).toBe(3);
  });

  it("a nonce is sent when configured and must come back: echoed is good, rewritten or dropped is unavailable", async () => {
    const counted = await proxy(main.url);
    const echoed = source({ nonceBytes: 16 });
    expect((await echoed.source.check(certificate(counted.url, good), "ocsp", clock())).status).toBe("good");

    counted.rewrite = (der) =>
      rewriteRequest(der, (request) => {
        const nonce = request.tbsRequest.requestExtensions!.find((e) => e.extnID === id_pkix_ocsp_nonce)!;
        nonce.extnValue = new OctetString(AsnConvert.serialize(new OctetString(new Uint8Array(16).fill(7))));
      });
    const wrong = source({ nonceBytes: 16 });
    expect(await unavailable(wrong.source.check(certificate(counted.url), "ocsp", clock()))).toMatch(/nonce_mismatch.*not the one sent/);

    counted.rewrite = (der) => rewriteRequest(der, (request) => delete request.tbsRequest.requestExtensions);
    expect(await unavailable(wrong.source.check(certificate(counted.url), "ocsp", clock()))).toMatch(/nonce_mismatch.*carries no nonce/);
    expect(wrong.reports.map((r) => r.outcome)).toEqual(["rejected", "rejected"]);
  });

  it("a response that names the certificate by a SHA-256 CertID is accepted", async () => {
    const counted = await proxy(main.url);
    counted.rewrite = (der) =>
      rewriteRequest(der, (request) => {
        const id = request.tbsRequest.requestList[0]!.reqCert;
        id.hashAlgorithm.algorithm = hashAlgorithmOids.sha256;
        id.issuerNameHash = new OctetString(createHash("sha256").update(caSubject()).digest());
        id.issuerKeyHash = new OctetString(createHash("sha256").update(caKeyBits()).digest());
      });
    expect(await source().source.check(certificate(counted.url, revoked), "ocsp", clock())).toMatchObject({ status: "revoked", revokedAt, revokedReason: 1 });
  });

  it("a responder certificate without id-kp-OCSPSigning, or issued by another CA, is refused", async () => {
    const { source: ocsp } = source();
    expect(await unavailable(ocsp.check(certificate(withoutEku.url, good), "ocsp", clock()))).toMatch(/unauthorized_signer.*id-kp-OCSPSigning/);
    expect(await unavailable(ocsp.check(certificate(otherSigner.url, good), "ocsp", clock()))).toMatch(/unauthorized_signer.*not issued by the certificate's issuer/);
  });

  it("tryLater, a malformed answer, HTTP 500 and a responder that never answers each give unavailable", async () => {
    const counted = await proxy(undefined);
    const { source: ocsp, reports } = source({ timeoutMs: 300 });
    counted.behaviour = "tryLater";
    expect(await unavailable(ocsp.check(certificate(counted.url), "ocsp", clock()))).toMatch(/try_later.*tryLater/);
    counted.behaviour = "malformed";
    expect(await unavailable(ocsp.check(certificate(counted.url), "ocsp", clock()))).toMatch(/malformed/);
    counted.behaviour = "error500";
    expect(await unavailable(ocsp.check(certificate(counted.url), "ocsp", clock()))).toMatch(/HTTP 500/);
    counted.behaviour = "silent";
    expect(await unavailable(ocsp.check(certificate(counted.url), "ocsp", clock()))).toMatch(/no answer within 300 ms/);
    expect(reports.map((r) => r.outcome)).toEqual(["rejected", "rejected", "fetch_failed", "fetch_failed"]);
  });

  it("a stale response is never used: past nextUpdate it is fetched again, and a fresh one already past its nextUpdate is refused", async () => {
    const { source: ocsp, reports } = source();
    const leaf = certificate(shortLived.url, good);
    expect((await ocsp.check(leaf, "ocsp", clock())).status).toBe("good");
    offset = 2 * minute; // the responder's nextUpdate (thisUpdate + 1 minute) has passed
    try {
      expect(await unavailable(ocsp.check(leaf, "ocsp", clock()))).toMatch(/not_current.*stale: nextUpdate/);
      expect(reports.map((r) => r.outcome)).toEqual(["fetched", "rejected"]);
    } finally {
      offset = 0;
    }
  });

  it("a response without nextUpdate answers for the configured period after its thisUpdate, then is fetched again", async () => {
    const counted = await proxy(withoutNextUpdate.url);
    const { source: ocsp } = source({ withoutNextUpdateMs: minute });
    const leaf = certificate(counted.url, revoked);
    expect((await ocsp.check(leaf, "ocsp", clock())).status).toBe("revoked");
    expect((await ocsp.check(leaf, "ocsp", clock())).status).toBe("revoked");
    expect(counted.requests).toBe(1);
    offset = 2 * minute;
    try {
      // The stored response is too old; a new one (thisUpdate now, by the responder's clock) is older still by ours.
      expect(await unavailable(ocsp.check(leaf, "ocsp", clock()))).toMatch(/no nextUpdate and its thisUpdate .* is too old/);
      expect(counted.requests).toBe(2);
    } finally {
      offset = 0;
    }
  });

  it("the responders configured for the issuer replace the ones the certificate names", async () => {
    const counted = await proxy(main.url);
    const configured = { ...issuer, ocspUrls: [counted.url] };
    const responses = new OcspResponses(new Map([[issuer.id, configured]]), new OcspResponsesRepository(database), fetchOcsp, { timeoutMs: 2000, nonceBytes: 0, withoutNextUpdateMs: minute }, clock);
    const ocsp = new OcspRevocationSource(responses);
    const leaf = certificate("http://127.0.0.1:9/never-asked", onHold);
    expect(ocsp.offers(leaf)).toBe(true);
    expect(ocsp.offers(certificate(undefined, onHold))).toBe(true);
    expect((await ocsp.check(leaf, "ocsp", clock())).status).toBe("revoked");
    expect(counted.requests).toBe(1);
  });

  it("CRL asked of the OCSP source is check_method_not_offered; no responder at all is unavailable", async () => {
    const { source: ocsp } = source();
    const error = await ocsp.check(certificate(main.url, good), "crl", clock()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe("check_method_not_offered");
    expect(ocsp.offers(certificate(undefined, good))).toBe(false);
    expect(await unavailable(ocsp.check(certificate(undefined, good), undefined, clock()))).toMatch(/names no OCSP responder/);
    expect(await unavailable(ocsp.check({ ...certificate(main.url, good), trustAnchor: "sha256:other" }, undefined, clock()))).toMatch(/not a configured trust anchor/);
  });

  function caSubject(): Uint8Array {
    return new Uint8Array(AsnConvert.serialize(caCertificate().tbsCertificate.subject));
  }
  function caKeyBits(): Uint8Array {
    return new Uint8Array(caCertificate().tbsCertificate.subjectPublicKeyInfo.subjectPublicKey);
  }
  function caCertificate() {
    return AsnConvert.parse(ca.der, Certificate);
  }
});

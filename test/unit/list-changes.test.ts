import { describe, expect, it } from "vitest";
import type { SerialChange } from "../../src/domain/certificates/crl/crl-diff.ts";
import { ListChanges, type ListIssuer, type RegisteredCertificate } from "../../src/domain/certificates/crl/list-changes.ts";
import type { CrlEntry, VerifiedCrl } from "../../src/domain/certificates/crl/verified-crl.ts";
import type { Status, StoredCertificate } from "../../src/domain/certificates/model.ts";

/**
 * What a new list's changes record, over lists, a diff and a registry the
 * test states: the rule itself, without parsing or storing a list.
 */
const url = "http://ca.example.test/ca.crl";
const now = Date.UTC(2026, 5, 1, 12);
const thisUpdate = now - 60_000;
const revokedEntry: CrlEntry = { revokedAt: now - 3_600_000, reason: 1 };

function list(crlNumber: bigint, revoked: ReadonlyMap<string, CrlEntry>): VerifiedCrl {
  return {
    thisUpdate,
    nextUpdate: thisUpdate + 86_400_000,
    crlNumber,
    issuingDistributionPoint: undefined,
    expiredCertsOnCrl: undefined,
    sha256: `list-${crlNumber}`,
    entries: revoked.size,
    indexBytes: 0,
    tables: [],
    lookup: (serial) => revoked.get(serial),
  };
}

function certificate(id: string, serialNumber: string): StoredCertificate {
  return {
    id,
    accountId: "account",
    userId: "user",
    type: "jpki_card_user_authentication",
    origin: "verified",
    serialNumber,
    issuer: "CN=Test Anchor CA",
    notBefore: now - 86_400_000,
    notAfter: now + 365 * 86_400_000,
    fingerprintSha256: `fingerprint-${id}`,
    crlDistributionPoints: [url],
    ocspUrls: [],
    trustAnchor: "anchor",
    createdAt: now - 86_400_000,
  };
}

/** Two revoked certificates whose serials the new list drops: each would be good by the list. */
const first = certificate("certificate-1", "01");
const second = certificate("certificate-2", "02");
const previous = list(1n, new Map([["01", revokedEntry], ["02", revokedEntry]]));
const next = list(2n, new Map());
const dropped: SerialChange[] = [
  { serialHex: "01", before: revokedEntry, after: undefined },
  { serialHex: "02", before: revokedEntry, after: undefined },
];

function changes(registered: RegisteredCertificate[]): ListChanges {
  return new ListChanges(
    async () => dropped,
    { findBySerials: async (_anchor, serials) => registered.filter((r) => serials.includes(r.certificate.serialNumber)) },
    () => now,
  );
}

/** A registered certificate whose newest record says `status` (undefined: never checked). */
const withStatus = (c: StoredCertificate, status: Status | undefined = "revoked"): RegisteredCertificate => ({ certificate: c, status });

describe("ListChanges", () => {
  it("records what the new list now says of each registered certificate it changes", async () => {
    const issuer: ListIssuer = { id: "anchor", crlUrls: undefined };
    const records = await changes([withStatus(first), withStatus(second)]).records(issuer, url, previous, next);
    expect(records.map((r) => [r.certificateId, r.status, r.checkMethod])).toEqual([
      ["certificate-1", "good", "crl"],
      ["certificate-2", "good", "crl"],
    ]);
  });

  it("records nothing for a certificate the issuer says its lists do not cover, and still records the others", async () => {
    const asked: string[][] = [];
    const issuer: ListIssuer = {
      id: "anchor",
      crlUrls: undefined,
      notCoveredBy: async (certificates) => {
        asked.push(certificates.map((c) => c.id));
        return new Set(["certificate-1"]);
      },
    };
    // certificate-1 never checked would otherwise get the previous list's answer first: it gets nothing either.
    for (const status of ["revoked", undefined] as const) {
      asked.length = 0;
      const records = await changes([withStatus(first, status), withStatus(second)]).records(issuer, url, previous, next);
      expect(records.map((r) => [r.certificateId, r.status])).toEqual([["certificate-2", "good"]]);
      // Asked once, about the certificates of this list that the change names.
      expect(asked).toEqual([["certificate-1", "certificate-2"]]);
    }
  });

  it("does not ask the issuer when the list changes no registered certificate of its own", async () => {
    const other = { ...certificate("certificate-3", "01"), crlDistributionPoints: ["http://elsewhere.example.test/other.crl"] };
    let asked = 0;
    const issuer: ListIssuer = {
      id: "anchor",
      crlUrls: undefined,
      notCoveredBy: async () => {
        asked++;
        return new Set();
      },
    };
    expect(await changes([withStatus(other)]).records(issuer, url, previous, next)).toEqual([]);
    expect(asked).toBe(0);
  });
});

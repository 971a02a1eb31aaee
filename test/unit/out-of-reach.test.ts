import { describe, expect, it } from "vitest";
import type { CertificateType } from "../../src/domain/certificates/model.ts";
import type { JpkiLinkRow } from "../../src/domain/oidc/jpki/model.ts";
import { whyOutOfReach } from "../../src/domain/oidc/jpki/out-of-reach.ts";

const now = Date.UTC(2026, 10, 27);
const day = 24 * 3600 * 1000;

function link(type: CertificateType, status: "good" | "revoked", notAfter = now + 365 * day): JpkiLinkRow {
  return { certificateId: `c-${type}-${status}`, userId: "u", fingerprintSha256: "f", type, notAfter, status, linkedAt: now - day, checkedAt: now - day };
}

describe("why a level is out of reach, from the user's linked certificates", () => {
  const cases: { name: string; links: JpkiLinkRow[]; method: "jpki_sig" | "jpki_auth" | undefined; expected: string }[] = [
    { name: "no certificate would reach it", links: [link("jpki_card_digital_signature", "revoked")], method: undefined, expected: "no_method" },
    { name: "a revoked signature certificate", links: [link("jpki_card_digital_signature", "revoked")], method: "jpki_sig", expected: "signature_revoked" },
    { name: "a revoked mobile signature certificate", links: [link("jpki_mobile_digital_signature", "revoked")], method: "jpki_sig", expected: "signature_revoked" },
    { name: "a revoked user authentication certificate where one would do", links: [link("jpki_card_user_authentication", "revoked")], method: "jpki_auth", expected: "authentication_revoked" },
    { name: "a revoked user authentication certificate where a signature is needed", links: [link("jpki_card_user_authentication", "revoked")], method: "jpki_sig", expected: "no_certificate" },
    { name: "an expired signature certificate", links: [link("jpki_card_digital_signature", "good", now - day)], method: "jpki_sig", expected: "expired" },
    { name: "revoked says more than expired", links: [link("jpki_card_digital_signature", "good", now - day), link("jpki_card_digital_signature", "revoked")], method: "jpki_sig", expected: "signature_revoked" },
    { name: "nothing linked", links: [], method: "jpki_sig", expected: "no_certificate" },
  ];
  it.each(cases)("$name → $expected", ({ links, method, expected }) => {
    expect(whyOutOfReach(links, method, now)).toBe(expected);
  });
});

/**
 * The mock environment's certificate authority: real X.509 certificates and
 * CRLs in a JPKI-like profile, for developers without cards. Pure: the caller
 * persists the PEMs and DER it gets back.
 */
export { createMockCa, defaultMockCaCommonName, mockCaOrganization, mockCaValidityYears, type CreateMockCaOptions } from "./ca.ts";
export type { MockCaMaterial } from "./ca-material.ts";
export {
  certificateKinds,
  isCertificateKind,
  profileFor,
  type CertificateKind,
  type CertificateProfile,
  type KeyUsageName,
} from "./certificate-kind.ts";
export { createMockCrl, type CreateMockCrlInput, type MockCrlEntry } from "./crl.ts";
export { issueMockCertificate, type IssueMockCertificateInput, type IssuedCertificate } from "./issue.ts";
export {
  jpkiCardDigitalSignaturePolicyOid,
  jpkiCardUserAuthenticationPolicyOid,
  mockJpkiMobileDigitalSignaturePolicyOid,
  mockJpkiMobileUserAuthenticationPolicyOid,
  mockProfileArc,
} from "./oids.ts";
export {
  isRevocationReason,
  revocationReasonCode,
  revocationReasonCodes,
  revocationReasonForCode,
  revocationReasons,
  type RevocationReason,
  type RevocationReasonCode,
} from "./revocation-reason.ts";
export { normalizeSerialNumberHex } from "../certificates/x509/serial-number.ts";
export { answerOcspRequest, type MockOcspSigner, type MockOcspState } from "./ocsp-answer.ts";
export { issueOcspResponderCertificate, responderRenewBeforeMs } from "./ocsp-responder.ts";

import { newId } from "../ids.ts";
import type { StatusRecord, StoredCertificate } from "./model.ts";
import type { RevocationAnswer } from "./revocation-source.ts";

/**
 * The status record a liveness check (by certificate id or by user, one at a
 * time or in a batch) writes for a source's answer. A revoked answer always
 * carries a reason: RFC 5280's "unspecified" (0) when the source gave none.
 */
export function livenessRecord(certificate: StoredCertificate, answer: RevocationAnswer, createdAt: number): StatusRecord {
  const revoked = answer.status === "revoked";
  return {
    id: newId(),
    accountId: certificate.accountId,
    certificateId: certificate.id,
    status: answer.status,
    checkMethod: answer.method,
    checkPurpose: "liveness_check",
    sourceUpdatedAt: answer.sourceUpdatedAt,
    revokedAt: revoked ? answer.revokedAt : null,
    revokedReason: revoked ? (answer.revokedReason ?? 0) : null,
    createdAt,
  };
}

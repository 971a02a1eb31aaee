import { newTimeOrderedId } from "../ids.ts";
import type { CheckPurpose, StatusRecord, StoredCertificate } from "./model.ts";
import type { RevocationAnswer } from "./revocation-source.ts";

/**
 * The status record a check writes for a source's answer: a liveness check
 * (by certificate id, content or user, one at a time or in a batch) unless a
 * verification made it. A revoked answer always carries a reason: RFC 5280's
 * "unspecified" (0) when the source gave none.
 */
export function statusRecord(
  certificate: StoredCertificate,
  answer: RevocationAnswer,
  createdAt: number,
  purpose: CheckPurpose = "liveness_check",
): StatusRecord {
  const revoked = answer.status === "revoked";
  return {
    id: newTimeOrderedId(createdAt),
    accountId: certificate.accountId,
    certificateId: certificate.id,
    status: answer.status,
    checkMethod: answer.method,
    checkPurpose: purpose,
    sourceUpdatedAt: answer.sourceUpdatedAt,
    revokedAt: revoked ? answer.revokedAt : null,
    revokedReason: revoked ? (answer.revokedReason ?? 0) : null,
    createdAt,
  };
}

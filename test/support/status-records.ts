import type { StatusRecord, StoredCertificate } from "../../src/domain/certificates/model.ts";
import { newId } from "../../src/domain/ids.ts";

/** A good liveness-check record of the certificate, as a storage test writes it directly. */
export function goodStatusRecord(certificate: Pick<StoredCertificate, "id" | "accountId">, createdAt = 2, id = newId()): StatusRecord {
  return {
    id,
    accountId: certificate.accountId,
    certificateId: certificate.id,
    status: "good",
    checkMethod: "crl",
    checkPurpose: "liveness_check",
    sourceUpdatedAt: 1,
    revokedAt: null,
    revokedReason: null,
    createdAt,
  };
}

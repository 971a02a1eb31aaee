import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import {
  CertificateSchema,
  CertificateStatus_CheckMethod as ProtoCheckMethod,
  CertificateStatus_CheckPurpose as ProtoCheckPurpose,
  CertificateStatus_Status as ProtoStatus,
  CertificateStatusSchema,
  Certificate_Type as ProtoType,
  UserSchema,
  type Certificate,
  type CertificateStatus,
  type CrlReason,
  type User,
} from "../../gen/service/verify/v2/certificate_pb.ts";
import type {
  CertificateType,
  CertificateUser,
  CheckMethod,
  CheckPurpose,
  Status,
  StatusRecord,
  StoredCertificate,
} from "../domain/certificates/model.ts";
import { DomainError, invalidField } from "../domain/errors.ts";

/** Translations between the domain's vocabulary and the protobuf enums. */

const types: Record<CertificateType, ProtoType> = {
  jpki_card_digital_signature: ProtoType.JPKI_CARD_DIGITAL_SIGNATURE,
  jpki_card_user_authentication: ProtoType.JPKI_CARD_USER_AUTHENTICATION,
  jpki_mobile_digital_signature: ProtoType.JPKI_MOBILE_DIGITAL_SIGNATURE,
  jpki_mobile_user_authentication: ProtoType.JPKI_MOBILE_USER_AUTHENTICATION,
};
const statuses: Record<Status, ProtoStatus> = {
  good: ProtoStatus.GOOD,
  revoked: ProtoStatus.REVOKED,
  unknown: ProtoStatus.UNKNOWN,
};
const methods: Record<CheckMethod, ProtoCheckMethod> = { crl: ProtoCheckMethod.CRL, ocsp: ProtoCheckMethod.OCSP };
const purposes: Record<CheckPurpose, ProtoCheckPurpose> = {
  signature_verification: ProtoCheckPurpose.SIGNATURE_VERIFICATION,
  liveness_check: ProtoCheckPurpose.LIVENESS_CHECK,
};

function inverse<K extends string, V extends number>(map: Record<K, V>): Map<number, K> {
  return new Map(Object.entries(map).map(([k, v]) => [v as number, k as K]));
}
const typeOf = inverse(types);
const statusOf = inverse(statuses);
const methodOf = inverse(methods);

export function certificateMessage(c: StoredCertificate): Certificate {
  return create(CertificateSchema, { id: c.id, type: types[c.type], createdAt: timestampFromMs(c.createdAt) });
}

export function userMessage(u: CertificateUser): User {
  return create(UserSchema, { id: u.id, createdAt: timestampFromMs(u.createdAt) });
}

export function statusMessage(s: StatusRecord): CertificateStatus {
  return create(CertificateStatusSchema, {
    id: s.id,
    status: statuses[s.status],
    checkMethod: methods[s.checkMethod],
    checkPurpose: purposes[s.checkPurpose],
    sourceUpdatedAt: timestampFromMs(s.sourceUpdatedAt),
    createdAt: timestampFromMs(s.createdAt),
    ...(s.revokedAt !== null ? { revokedAt: timestampFromMs(s.revokedAt) } : {}),
    ...(s.revokedReason !== null ? { revokedReason: s.revokedReason as CrlReason } : {}),
  });
}

export function certificateTypeMessage(type: CertificateType): ProtoType {
  return types[type];
}

export function statusMessageOf(status: Status): ProtoStatus {
  return statuses[status];
}

export function checkMethodMessage(method: CheckMethod): ProtoCheckMethod {
  return methods[method];
}

/** UNSPECIFIED lets the server choose; a number outside the enum is refused. */
export function checkMethodFrom(value: ProtoCheckMethod, field = "check_method"): CheckMethod | undefined {
  if (value === ProtoCheckMethod.UNSPECIFIED) return undefined;
  const method = methodOf.get(value);
  if (!method) throw new DomainError("check_method_unsupported", `${field} ${value} is not a supported check method (CRL or OCSP)`, field);
  return method;
}

export function certificateTypeFrom(value: ProtoType, field: string, required: boolean): CertificateType | undefined {
  if (value === ProtoType.UNSPECIFIED) {
    if (required) throw invalidField(field, `${field} is required`);
    return undefined;
  }
  const type = typeOf.get(value);
  if (!type) throw invalidField(field, `${field} ${value} is not a certificate type`);
  return type;
}

export function statusFrom(value: ProtoStatus, field: string): Status {
  const status = statusOf.get(value);
  if (!status) throw invalidField(field, value === ProtoStatus.UNSPECIFIED ? `${field} is required` : `${field} ${value} is not a status`);
  return status;
}

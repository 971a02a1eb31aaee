import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromMs, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { CrlReason } from "../../../gen/service/verify/v2/certificate_pb.ts";
import {
  CreateMockCertificateResponseSchema,
  KeyAlgorithm,
  SetMockCertificateStatusResponseSchema,
  type CreateMockCertificateRequest,
  type MockService,
  type SetMockCertificateStatusRequest,
} from "../../../gen/service/verify/v2/mock_service_pb.ts";
import { isRevocationReasonCode } from "../../domain/certificates/model.ts";
import { invalidField } from "../../domain/errors.ts";
import type { MockEnvironment } from "../../domain/mock/mock-environment.ts";
import { callerAccountId } from "../auth.ts";
import { personFrom } from "../content-convert.ts";
import type { MockKeyAlgorithm } from "../../domain/mock-ca/keys.ts";
import type { CheckMethod } from "../../domain/certificates/model.ts";
import { certificateMessage, certificateTypeFrom, checkMethodFrom, checkMethodMessage, statusFrom, userMessage } from "../convert.ts";

/** MockService on a server in mock mode (the mock extension registers it in place of DisabledMockHandler). */
export class MockHandler implements ServiceImpl<typeof MockService> {
  constructor(private readonly environment: MockEnvironment) {}

  async createMockCertificate(req: CreateMockCertificateRequest, context: HandlerContext) {
    const type = certificateTypeFrom(req.type, "type", true)!;
    const created = await this.environment.createCertificate(callerAccountId(context), {
      type,
      userId: req.userId || undefined,
      commonName: req.commonName || undefined,
      person: personFrom(req.person),
      keyAlgorithm: keyAlgorithmFrom(req.keyAlgorithm),
    });
    return create(CreateMockCertificateResponseSchema, {
      certificate: certificateMessage(created.certificate),
      user: userMessage(created.user),
      certificatePem: created.certificatePem,
      privateKeyPem: created.privateKeyPem,
      serialNumber: created.certificate.serialNumber,
    });
  }

  async setMockCertificateStatus(req: SetMockCertificateStatusRequest, context: HandlerContext) {
    const status = statusFrom(req.status, "status");
    if (req.revokedReason !== undefined && !isRevocationReasonCode(req.revokedReason)) {
      throw invalidField("revoked_reason", `revoked_reason ${req.revokedReason} is not an RFC 5280 reason`);
    }
    const state = await this.environment.setStatus(callerAccountId(context), req.certificateId, {
      status,
      revokedReason: req.revokedReason,
      revokedAt: millis(req.revokedAt, "revoked_at"),
      sourceUpdatedAt: millis(req.sourceUpdatedAt, "source_updated_at"),
      offeredMethods: req.offeredCheckMethods.map((m) => offeredMethod(m)),
    });
    return create(SetMockCertificateStatusResponseSchema, {
      certificateId: state.certificateId,
      status: req.status,
      ...(state.revokedReason !== null ? { revokedReason: state.revokedReason as CrlReason } : {}),
      ...(state.revokedAt !== null ? { revokedAt: timestampFromMs(state.revokedAt) } : {}),
      ...(state.sourceUpdatedAt !== null ? { sourceUpdatedAt: timestampFromMs(state.sourceUpdatedAt) } : {}),
      offeredCheckMethods: (state.offeredMethods ?? ["crl", "ocsp"]).map(checkMethodMessage),
    });
  }
}

/** An entry of offered_check_methods: CRL or OCSP, never UNSPECIFIED. */
function offeredMethod(value: number): CheckMethod {
  const method = checkMethodFrom(value, "offered_check_methods");
  if (!method) throw invalidField("offered_check_methods", "offered_check_methods lists CHECK_METHOD_CRL or CHECK_METHOD_OCSP, never CHECK_METHOD_UNSPECIFIED");
  return method;
}

function keyAlgorithmFrom(value: KeyAlgorithm): MockKeyAlgorithm {
  switch (value) {
    case KeyAlgorithm.UNSPECIFIED:
    case KeyAlgorithm.RSA_2048:
      return "rsa_2048";
    case KeyAlgorithm.EC_P256:
      return "ec_p256";
    default:
      throw invalidField("key_algorithm", `key_algorithm ${String(value)} is not a key algorithm`);
  }
}


function millis(value: Timestamp | undefined, field: string): number | undefined {
  if (!value) return undefined;
  const ms = timestampDate(value).getTime();
  if (!Number.isFinite(ms) || value.nanos < 0 || value.nanos > 999_999_999) throw invalidField(field, `${field} is not a valid time`);
  return ms;
}

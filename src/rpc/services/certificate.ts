import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  BatchCheckCertificateStatusResponseSchema,
  BatchCheckUserCertificateStatusResponseSchema,
  CheckCertificateStatusByContentResponseSchema,
  CheckCertificateStatusResponseSchema,
  CheckUserCertificateStatusResponseSchema,
  GetCertificateResponseSchema,
  GetCertificateStatusResponseSchema,
  ListCertificateStatusesResponseSchema,
  type BatchCheckCertificateStatusRequest,
  type BatchCheckUserCertificateStatusRequest,
  type CertificateService,
  type CheckCertificateStatusByContentRequest,
  type CheckCertificateStatusRequest,
  type CheckUserCertificateStatusRequest,
  type GetCertificateRequest,
  type GetCertificateStatusRequest,
  type ListCertificateStatusesRequest,
} from "../../../gen/service/verify/v2/certificate_service_pb.ts";
import type { BatchStatusChecks } from "../../domain/certificates/batch-checks.ts";
import type { CertificateStatusChecks } from "../../domain/certificates/status-checks.ts";
import { callerAccountId, callerOf } from "../auth.ts";
import { certificateMessage, certificateTypeFrom, checkMethodFrom, statusMessage, userMessage } from "../convert.ts";
import { toBatchCheckError } from "../errors.ts";

/** Thin translation between CertificateService messages and the status-check domain. */
export class CertificateHandler implements ServiceImpl<typeof CertificateService> {
  constructor(
    private readonly checks: CertificateStatusChecks,
    private readonly batches: BatchStatusChecks,
  ) {}

  async checkCertificateStatus(req: CheckCertificateStatusRequest, context: HandlerContext) {
    const method = checkMethodFrom(req.checkMethod);
    const result = await this.checks.checkCertificate(callerOf(context), req.certificateId, method);
    return create(CheckCertificateStatusResponseSchema, {
      certificate: certificateMessage(result.certificate),
      certificateStatus: statusMessage(result.status),
    });
  }

  async checkCertificateStatusByContent(req: CheckCertificateStatusByContentRequest, context: HandlerContext) {
    const method = checkMethodFrom(req.checkMethod);
    const result = await this.checks.checkCertificateContent(callerAccountId(context), req.certificate, method);
    return create(CheckCertificateStatusByContentResponseSchema, {
      certificate: certificateMessage(result.certificate),
      certificateStatus: statusMessage(result.status),
    });
  }

  async checkUserCertificateStatus(req: CheckUserCertificateStatusRequest, context: HandlerContext) {
    const type = certificateTypeFrom(req.certificateType, "certificate_type", false);
    const method = checkMethodFrom(req.checkMethod);
    const result = await this.checks.checkUser(callerAccountId(context), req.userId, type, method);
    return create(CheckUserCertificateStatusResponseSchema, {
      user: userMessage(result.user),
      certificate: certificateMessage(result.certificate),
      certificateStatus: statusMessage(result.status),
    });
  }

  async getCertificate(req: GetCertificateRequest, context: HandlerContext) {
    const result = await this.checks.getCertificate(callerAccountId(context), req.certificateId);
    return create(GetCertificateResponseSchema, {
      certificate: certificateMessage(result.certificate),
      user: userMessage(result.user),
    });
  }

  async listCertificateStatuses(req: ListCertificateStatusesRequest, context: HandlerContext) {
    const page = await this.checks.listStatuses(callerAccountId(context), req.certificateId, req.pageSize, req.pageToken);
    return create(ListCertificateStatusesResponseSchema, {
      certificateStatuses: page.statuses.map(statusMessage),
      nextPageToken: page.nextPageToken,
    });
  }

  async getCertificateStatus(req: GetCertificateStatusRequest, context: HandlerContext) {
    const result = await this.checks.getStatus(callerAccountId(context), req.certificateStatusId);
    return create(GetCertificateStatusResponseSchema, {
      certificate: certificateMessage(result.certificate),
      certificateStatus: statusMessage(result.status),
    });
  }

  async batchCheckCertificateStatus(req: BatchCheckCertificateStatusRequest, context: HandlerContext) {
    const method = checkMethodFrom(req.checkMethod);
    const items = await this.batches.checkCertificates(callerAccountId(context), req.certificateIds, method);
    return create(BatchCheckCertificateStatusResponseSchema, {
      results: items.map((item) =>
        item.error
          ? { certificateId: item.id, error: toBatchCheckError(item.error) }
          : {
              certificateId: item.id,
              certificate: certificateMessage(item.result.certificate),
              certificateStatus: statusMessage(item.result.status),
            },
      ),
    });
  }

  async batchCheckUserCertificateStatus(req: BatchCheckUserCertificateStatusRequest, context: HandlerContext) {
    const type = certificateTypeFrom(req.certificateType, "certificate_type", false);
    const method = checkMethodFrom(req.checkMethod);
    const items = await this.batches.checkUsers(callerAccountId(context), req.userIds, type, method);
    return create(BatchCheckUserCertificateStatusResponseSchema, {
      results: items.map((item) =>
        item.error
          ? { userId: item.id, error: toBatchCheckError(item.error) }
          : {
              userId: item.id,
              user: userMessage(item.result.user),
              certificate: certificateMessage(item.result.certificate),
              certificateStatus: statusMessage(item.result.status),
            },
      ),
    });
  }
}

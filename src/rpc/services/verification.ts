import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  DeleteVerificationResponseSchema,
  GetVerificationResponseSchema,
  HashAlgorithm as ProtoHash,
  ListVerificationsResponseSchema,
  Verification_Result as ProtoResult,
  VerificationSchema,
  VerifyResponseSchema,
  type DeleteVerificationRequest,
  type GetVerificationRequest,
  type ListVerificationsRequest,
  type Verification,
  type VerificationService,
  type VerifyRequest,
} from "../../../gen/service/verify/v2/verification_service_pb.ts";
import { invalidField } from "../../domain/errors.ts";
import type { HashAlgorithm } from "../../domain/verification/hash-algorithm.ts";
import type { VerificationRecord, VerificationResult } from "../../domain/verification/model.ts";
import type { Verifications, VerificationView } from "../../domain/verification/verifications.ts";
import { callerAccountId } from "../auth.ts";
import { contentMessage } from "../content-convert.ts";
import { certificateMessage, checkMethodFrom, statusMessage } from "../convert.ts";

const hashes: Record<HashAlgorithm, ProtoHash> = { sha256: ProtoHash.SHA256, sha384: ProtoHash.SHA384, sha512: ProtoHash.SHA512 };
const results: Record<VerificationResult, ProtoResult> = {
  ok: ProtoResult.OK,
  signature_mismatch: ProtoResult.SIGNATURE_MISMATCH,
  certificate_expired: ProtoResult.CERTIFICATE_EXPIRED,
  certificate_revoked: ProtoResult.CERTIFICATE_REVOKED,
};

/** SHA-256/384/512 only: SHA-1 is known and refused, unspecified is a missing field. */
function hashFrom(value: ProtoHash): HashAlgorithm {
  if (value === ProtoHash.UNSPECIFIED) throw invalidField("hash_algorithm", "hash_algorithm is required");
  if (value === ProtoHash.SHA1) throw invalidField("hash_algorithm", "SHA-1 is not accepted: use SHA-256, SHA-384 or SHA-512");
  const hash = (Object.keys(hashes) as HashAlgorithm[]).find((h) => hashes[h] === value);
  if (!hash) throw invalidField("hash_algorithm", `hash_algorithm ${value} is not a hash algorithm`);
  return hash;
}

function verificationMessage(v: VerificationRecord): Verification {
  return create(VerificationSchema, {
    id: v.id,
    result: results[v.result],
    certificateId: v.certificateId,
    userId: v.userId ?? "",
    isNewUser: v.isNewUser,
    hashAlgorithm: hashes[v.hashAlgorithm],
    createdAt: timestampFromMs(v.createdAt),
  });
}

function viewFields(view: VerificationView) {
  return {
    verification: verificationMessage(view.verification),
    certificate: certificateMessage(view.certificate),
    ...(view.status ? { certificateStatus: statusMessage(view.status) } : {}),
    ...(view.content ? { certificateContent: contentMessage(view.content) } : {}),
  };
}

/** Thin translation between VerificationService messages and the verification domain. */
export class VerificationHandler implements ServiceImpl<typeof VerificationService> {
  constructor(private readonly verifications: Verifications) {}

  async verify(req: VerifyRequest, context: HandlerContext) {
    const view = await this.verifications.verify(callerAccountId(context), {
      certificate: req.certificate,
      hashAlgorithm: hashFrom(req.hashAlgorithm),
      digest: req.digest,
      signature: req.signature,
      identifyUser: req.identifyUser,
      checkMethod: checkMethodFrom(req.checkMethod),
    });
    return create(VerifyResponseSchema, viewFields(view));
  }

  async getVerification(req: GetVerificationRequest, context: HandlerContext) {
    return create(GetVerificationResponseSchema, viewFields(await this.verifications.get(callerAccountId(context), req.verificationId)));
  }

  async listVerifications(req: ListVerificationsRequest, context: HandlerContext) {
    const page = await this.verifications.list(
      callerAccountId(context),
      { userId: req.userId || undefined, certificateId: req.certificateId || undefined },
      req.pageSize,
      req.pageToken,
    );
    return create(ListVerificationsResponseSchema, { verifications: page.verifications.map(verificationMessage), nextPageToken: page.nextPageToken });
  }

  async deleteVerification(req: DeleteVerificationRequest, context: HandlerContext) {
    await this.verifications.delete(callerAccountId(context), req.verificationId);
    return create(DeleteVerificationResponseSchema, {});
  }
}

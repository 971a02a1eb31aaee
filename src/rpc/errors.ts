import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { BatchCheckErrorSchema, type BatchCheckError } from "../../gen/service/verify/v2/certificate_service_pb.ts";
import { ErrorReason } from "../../gen/service/verify/v2/errors_pb.ts";
import type { DomainError, DomainErrorCode } from "../domain/errors.ts";
import type { BindingRefusal, BindingRefusalReason } from "../domain/oidc/dpop/token-binding.ts";

export const errorDomain = "verify.shomei";

/** Each domain failure's Connect code and stable reason (documented in proto/service/verify/v2/errors.proto). */
const mapping: Record<DomainErrorCode, [Code, ErrorReason]> = {
  invalid_field: [Code.InvalidArgument, ErrorReason.INVALID_FIELD],
  check_method_unsupported: [Code.InvalidArgument, ErrorReason.CHECK_METHOD_UNSUPPORTED],
  check_method_not_offered: [Code.FailedPrecondition, ErrorReason.CHECK_METHOD_UNSUPPORTED],
  invalid_page_token: [Code.InvalidArgument, ErrorReason.INVALID_PAGE_TOKEN],
  unsupported_certificate: [Code.FailedPrecondition, ErrorReason.UNSUPPORTED_CERTIFICATE],
  verification_not_found: [Code.NotFound, ErrorReason.VERIFICATION_NOT_FOUND],
  event_not_found: [Code.NotFound, ErrorReason.EVENT_NOT_FOUND],
  webhook_endpoint_not_found: [Code.NotFound, ErrorReason.WEBHOOK_ENDPOINT_NOT_FOUND],
  webhook_endpoint_disabled: [Code.FailedPrecondition, ErrorReason.WEBHOOK_ENDPOINT_DISABLED],
  insufficient_scope: [Code.PermissionDenied, ErrorReason.INSUFFICIENT_SCOPE],
  oauth_client_not_found: [Code.NotFound, ErrorReason.OAUTH_CLIENT_NOT_FOUND],
  dpop_proof_invalid: [Code.Unauthenticated, ErrorReason.DPOP_PROOF_INVALID],
  certificate_not_found: [Code.NotFound, ErrorReason.CERTIFICATE_NOT_FOUND],
  user_not_found: [Code.NotFound, ErrorReason.USER_NOT_FOUND],
  certificate_status_not_found: [Code.NotFound, ErrorReason.CERTIFICATE_STATUS_NOT_FOUND],
  token_missing: [Code.Unauthenticated, ErrorReason.TOKEN_MISSING],
  token_malformed: [Code.Unauthenticated, ErrorReason.TOKEN_MALFORMED],
  token_invalid: [Code.Unauthenticated, ErrorReason.TOKEN_INVALID],
  api_use_not_started: [Code.PermissionDenied, ErrorReason.API_USE_NOT_STARTED],
  api_use_suspended: [Code.PermissionDenied, ErrorReason.API_USE_SUSPENDED],
  source_unavailable: [Code.Unavailable, ErrorReason.SOURCE_UNAVAILABLE],
  mock_environment_disabled: [Code.Unimplemented, ErrorReason.MOCK_ENVIRONMENT_DISABLED],
  // Admin-only failures; an RPC never raises them, but the mapping stays total.
  account_not_found: [Code.NotFound, ErrorReason.UNSPECIFIED],
  account_exists: [Code.AlreadyExists, ErrorReason.UNSPECIFIED],
  server_key_mismatch: [Code.FailedPrecondition, ErrorReason.UNSPECIFIED],
};

export function reasonName(reason: ErrorReason): string {
  return `ERROR_REASON_${ErrorReason[reason]}`;
}

/** The Connect code and reason a domain failure is answered with, as a call's error or as a batch item's. */
function codeAndReason(error: DomainError): [Code, ErrorReason] {
  return mapping[error.code];
}

export function toConnectError(error: DomainError): ConnectError {
  const [code, reason] = codeAndReason(error);
  const info = create(ErrorInfoSchema, {
    reason: reasonName(reason),
    domain: errorDomain,
    metadata: error.field ? { [error.code === "insufficient_scope" ? "scope" : "field"]: error.field } : {},
  });
  return new ConnectError(error.message, code, undefined, [{ desc: ErrorInfoSchema, value: info }], error);
}

/** A batch item's failure as data: the code (in the Connect protocol's string form) and reason the single call would raise. */
export function toBatchCheckError(error: DomainError): BatchCheckError {
  const [code, reason] = codeAndReason(error);
  return create(BatchCheckErrorSchema, { code: codeToString(code), message: error.message, reason });
}

/**
 * A refused access token presentation's reason, the same set userinfo
 * answers in its challenge (RFC 9449 section 7.1): a token sent with the
 * wrong scheme is an invalid token, as an unknown one is.
 */
const bindingReasons: Record<BindingRefusalReason, ErrorReason> = {
  invalid_token: ErrorReason.TOKEN_INVALID,
  invalid_dpop_proof: ErrorReason.DPOP_PROOF_INVALID,
  use_dpop_nonce: ErrorReason.USE_DPOP_NONCE,
};

/**
 * A refused presentation as an RPC answers it: unauthenticated with its
 * reason, and the headers an HTTP resource sends with it (RFC 9449 sections
 * 7.1 and 9): its `WWW-Authenticate` challenge, and for use_dpop_nonce the
 * nonce to retry with in `DPoP-Nonce`, so that a DPoP client library retries
 * an RPC as it retries userinfo. Connect sends them among the error's
 * headers, gRPC and gRPC-Web among its trailers.
 */
export function bindingRefusalToConnectError(refusal: BindingRefusal): ConnectError {
  const info = create(ErrorInfoSchema, { reason: reasonName(bindingReasons[refusal.reason]), domain: errorDomain });
  const metadata: Record<string, string> = { "WWW-Authenticate": refusal.challenge() };
  if (refusal.nonce !== undefined) metadata["DPoP-Nonce"] = refusal.nonce;
  return new ConnectError(refusal.description, Code.Unauthenticated, metadata, [{ desc: ErrorInfoSchema, value: info }], refusal);
}

import type { FuzzCase } from "./fuzz-case.ts";
import { revealedInternals } from "./leak-patterns.ts";
import type { RawReply } from "./raw-client.ts";
import { grpcWebTrailers } from "./rpc-envelopes.ts";

/**
 * What is wrong with one answer to bad input, if anything: a 5xx status; an
 * RPC error code that means the server failed rather than the request
 * (Connect `internal`/`unknown`, gRPC status 13/2); a gRPC answer without a
 * status; or any text of the answer (body, headers, trailers, the decoded
 * grpc-message) that reveals internals (see leak-patterns.ts).
 */
export interface Verdict {
  problems: string[];
  /** The RPC error code or gRPC status, when the answer has one. */
  code: string | undefined;
  /** The error message of the answer (Connect message, grpc-message), else the start of the body. */
  message: string;
}

const failedCodes = new Set(["internal", "unknown"]);
const failedGrpcStatuses = new Map([
  ["2", "UNKNOWN"],
  ["13", "INTERNAL"],
]);

const one = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

function decodeGrpcMessage(value: string | undefined): string {
  if (value === undefined) return "";
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function connectError(reply: RawReply): { code?: string; message?: string } | undefined {
  if (!String(reply.headers["content-type"] ?? "").startsWith("application/json") || reply.status < 400) return undefined;
  try {
    const parsed = JSON.parse(reply.body.toString("utf8")) as unknown;
    return parsed && typeof parsed === "object" ? (parsed as { code?: string; message?: string }) : undefined;
  } catch {
    return undefined;
  }
}

export function judge(fuzzCase: FuzzCase, reply: RawReply): Verdict {
  const problems: string[] = [];
  let code: string | undefined;
  let message = reply.body.toString("utf8").slice(0, 200);
  if (reply.status >= 500) problems.push(`HTTP ${reply.status}`);

  if (fuzzCase.protocol === "connect" || fuzzCase.protocol === "connect-get") {
    const error = connectError(reply);
    if (error?.code !== undefined) {
      code = String(error.code);
      message = String(error.message ?? "");
      if (failedCodes.has(code)) problems.push(`Connect code ${code}`);
    }
  } else if (fuzzCase.protocol === "grpc" || fuzzCase.protocol === "grpc-web") {
    const fromBody = fuzzCase.protocol === "grpc-web" ? grpcWebTrailers(reply.body) : {};
    const status = one(reply.trailers["grpc-status"]) ?? one(reply.headers["grpc-status"]) ?? fromBody["grpc-status"];
    code = status;
    message = decodeGrpcMessage(one(reply.trailers["grpc-message"]) ?? one(reply.headers["grpc-message"]) ?? fromBody["grpc-message"]);
    // A gRPC server answers HTTP 200 with a status; another HTTP status (415, 404) stands in for it.
    if (status === undefined && reply.status === 200) problems.push("gRPC answer without grpc-status");
    const failed = status === undefined ? undefined : failedGrpcStatuses.get(status);
    if (failed) problems.push(`gRPC status ${status} ${failed}`);
  }

  const texts = [
    reply.body.toString("latin1"),
    message,
    ...Object.entries(reply.headers).map(([name, value]) => `${name}: ${String(value)}`),
    ...Object.entries(reply.trailers).map(([name, value]) => `${name}: ${String(value)}`),
  ];
  for (const text of texts) {
    const leak = revealedInternals(text);
    if (leak) {
      problems.push(`reveals internals (${leak})`);
      break;
    }
  }
  return { problems, code, message };
}

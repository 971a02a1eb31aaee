// The same client in a TypeScript project: the declarations beside the generated JavaScript type every message.
// Compiled with the project (tsc, esbuild…), or run directly with a TypeScript runner.
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { CertificateStatus_Status, type CertificateStatus } from "../gen/service/verify/v2/certificate_pb.js";
import { CertificateService } from "../gen/service/verify/v2/certificate_service_pb.js";

const bearer: Interceptor = (next) => (req) => {
  req.header.set("Authorization", `Bearer ${process.env.SHOMEI_TOKEN ?? ""}`);
  return next(req);
};
const certificates = createClient(CertificateService, createConnectTransport({ baseUrl: process.env.SHOMEI_SERVER ?? "http://localhost:8080", httpVersion: "1.1", interceptors: [bearer] }));

export async function statusOf(certificateId: string): Promise<CertificateStatus["status"] | undefined> {
  try {
    return (await certificates.checkCertificateStatus({ certificateId })).certificateStatus?.status;
  } catch (error) {
    const connectError = ConnectError.from(error);
    if (connectError.code === Code.NotFound && connectError.findDetails(ErrorInfoSchema)[0]?.reason === "ERROR_REASON_CERTIFICATE_NOT_FOUND") return undefined;
    throw connectError;
  }
}

export const statusName = (status: CertificateStatus["status"]) => CertificateStatus_Status[status];

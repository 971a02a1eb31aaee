// Plain JavaScript on Node 20+, no loader and no build step:
//   SHOMEI_SERVER=http://localhost:8080 SHOMEI_TOKEN=… node check-status.mjs <certificate id> [connect|grpc|grpc-web]
// Needs @bufbuild/protobuf, @connectrpc/connect and @connectrpc/connect-node (2.1.x for Node 20).
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { CertificateStatus_Status } from "../gen/service/verify/v2/certificate_pb.js";
import { CertificateService } from "../gen/service/verify/v2/certificate_service_pb.js";

const baseUrl = process.env.SHOMEI_SERVER ?? "http://localhost:8080";
const token = process.env.SHOMEI_TOKEN ?? "";

/** "Authorization: Bearer <token>" on every call. */
const bearer = (next) => (req) => {
  req.header.set("Authorization", `Bearer ${token}`);
  return next(req);
};

const transports = {
  connect: () => createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [bearer] }),
  grpc: () => createGrpcTransport({ baseUrl, interceptors: [bearer] }),
  "grpc-web": () => createGrpcWebTransport({ baseUrl, httpVersion: "1.1", interceptors: [bearer] }),
};
const transport = transports[process.argv[3] ?? "connect"];
if (!transport) throw new Error(`unknown protocol ${process.argv[3]}: connect, grpc or grpc-web`);
const certificates = createClient(CertificateService, transport());

try {
  const { certificate, certificateStatus } = await certificates.checkCertificateStatus({ certificateId: process.argv[2] ?? "" });
  console.log(certificate?.id, CertificateStatus_Status[certificateStatus?.status ?? 0]);
} catch (error) {
  const connectError = ConnectError.from(error);
  const [info] = connectError.findDetails(ErrorInfoSchema);
  console.error(Code[connectError.code], info?.reason, connectError.rawMessage);
  process.exitCode = 1;
}

// Plain JavaScript on Node 20+: a back end that holds an OAuth client of its
// API account gets an access token with client_credentials, then checks a
// certificate with it.
//   SHOMEI_SERVER=http://localhost:8080 SHOMEI_CLIENT_ID=api_… SHOMEI_CLIENT_SECRET=… \
//     node oauth-check-status.mjs <certificate id> [connect|grpc|grpc-web] [bearer|dpop]
// With dpop, a P-256 key made at start binds the token (RFC 9449): the token
// request and every call carry a proof of it, each naming its URL.
// Needs @bufbuild/protobuf, @connectrpc/connect and @connectrpc/connect-node (2.1.x for Node 20).
import { createHash, randomUUID, webcrypto } from "node:crypto";
import { URLSearchParams } from "node:url";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { CertificateStatus_Status } from "../gen/service/verify/v2/certificate_pb.js";
import { CertificateService } from "../gen/service/verify/v2/certificate_service_pb.js";

const baseUrl = process.env.SHOMEI_SERVER ?? "http://localhost:8080";
const [certificateId = "", protocol = "connect", scheme = "bearer"] = process.argv.slice(2);

const b64 = (bytes) => Buffer.from(bytes).toString("base64url");
const key = scheme === "dpop" ? await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]) : undefined;
const jwk = key && (({ kty, crv, x, y }) => ({ kty, crv, x, y }))(await webcrypto.subtle.exportKey("jwk", key.publicKey));

/** A DPoP proof for a POST to url; ath binds it to the access token it goes with. */
async function proof(url, accessToken) {
  const header = b64(JSON.stringify({ typ: "dpop+jwt", alg: "ES256", jwk }));
  const claims = { jti: randomUUID(), htm: "POST", htu: url, iat: Math.floor(Date.now() / 1000) };
  if (accessToken) claims.ath = createHash("sha256").update(accessToken).digest("base64url");
  const input = `${header}.${b64(JSON.stringify(claims))}`;
  const signature = await webcrypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key.privateKey, Buffer.from(input));
  return `${input}.${b64(signature)}`;
}

// The token endpoint, client_secret_basic (RFC 6749 section 2.3.1: each part form-encoded).
const tokenUrl = `${baseUrl}/api/oidc/v1/token`;
const encode = (value) => encodeURIComponent(value).replace(/%20/g, "+");
const credentials = Buffer.from(`${encode(process.env.SHOMEI_CLIENT_ID ?? "")}:${encode(process.env.SHOMEI_CLIENT_SECRET ?? "")}`).toString("base64");
const tokenResponse = await fetch(tokenUrl, {
  method: "POST",
  headers: { Authorization: `Basic ${credentials}`, "Content-Type": "application/x-www-form-urlencoded", ...(key ? { DPoP: await proof(tokenUrl) } : {}) },
  body: new URLSearchParams({ grant_type: "client_credentials", scope: "certificate.status" }),
});
const token = await tokenResponse.json();
if (!tokenResponse.ok) {
  console.error("token endpoint:", token.error, token.error_description);
  process.exit(1);
}

/** The access token on every call: Bearer, or DPoP with a proof whose htu is the call's URL. */
const authorization = (next) => async (req) => {
  req.header.set("Authorization", `${token.token_type} ${token.access_token}`);
  if (key) req.header.set("DPoP", await proof(req.url, token.access_token));
  return next(req);
};

const transports = {
  connect: () => createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [authorization] }),
  grpc: () => createGrpcTransport({ baseUrl, interceptors: [authorization] }),
  "grpc-web": () => createGrpcWebTransport({ baseUrl, httpVersion: "1.1", interceptors: [authorization] }),
};
const transport = transports[protocol];
if (!transport) throw new Error(`unknown protocol ${protocol}: connect, grpc or grpc-web`);
const certificates = createClient(CertificateService, transport());

try {
  const { certificate, certificateStatus } = await certificates.checkCertificateStatus({ certificateId });
  console.log(certificate?.id, CertificateStatus_Status[certificateStatus?.status ?? 0], token.token_type);
} catch (error) {
  const connectError = ConnectError.from(error);
  const [info] = connectError.findDetails(ErrorInfoSchema);
  console.error(Code[connectError.code], info?.reason, connectError.rawMessage);
  process.exitCode = 1;
}

import type { ocspRequest } from "./ocsp-request.ts";
import type { readOcspResponse } from "./ocsp-response.ts";

/** Writing an OCSP request and reading a response, with the ASN.1 schema library they are made with. */
export interface OcspCodec {
  ocspRequest: typeof ocspRequest;
  readOcspResponse: typeof readOcspResponse;
}

let loading: Promise<OcspCodec> | undefined;

/**
 * The codec, loaded on first use: its schema library (@peculiar/asn1-ocsp over
 * asn1js, some 300 KB of code whose module bodies build their schemas as they
 * load) took about a tenth of the server's start-up, and a server whose
 * issuers answer by CRL never needs it.
 */
export function loadOcspCodec(): Promise<OcspCodec> {
  loading ??= Promise.all([import("./ocsp-request.ts"), import("./ocsp-response.ts")]).then(([request, response]) => ({
    ocspRequest: request.ocspRequest,
    readOcspResponse: response.readOcspResponse,
  }));
  return loading;
}

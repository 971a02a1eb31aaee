import express, { type Response, type Router } from "express";
import type { MockEnvironment } from "../../domain/mock/mock-environment.ts";
import { X509Certificate } from "node:crypto";
import { OAuthError } from "../../domain/oidc/oauth-error.ts";

/** An OCSPRequest for a few certificates is a few hundred bytes. */
const maxOcspRequestBytes = 16 * 1024;
const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Mock mode only: the mock CA's certificate, its current CRL and its OCSP
 * responder, at the URLs written into every mock certificate (CRL
 * distribution point, authorityInfoAccess), so the mock environment can be
 * checked with real tools (openssl, CRL and OCSP clients) and status checks
 * go through the same sources as production.
 */
export function registerMockCaRoutes(router: Router, mock: MockEnvironment): void {
  router.get("/mock/ca.crt", async (_req, res) => {
    const ca = await mock.ca();
    res.type("application/pkix-cert").set("Cache-Control", "no-store").send(new X509Certificate(ca.certificatePem).raw);
  });
  router.get("/mock/ca.crl", async (_req, res) => {
    res.type("application/pkix-crl").set("Cache-Control", "no-store").send(Buffer.from(await mock.currentCrl()));
  });
  // RFC 6960 Appendix A.1: POST application/ocsp-request, or GET {url}/{url-encoding of base64 of the DER request}.
  router.post("/mock/ocsp", express.raw({ type: "application/ocsp-request", limit: maxOcspRequestBytes }), async (req, res) => {
    if (!Buffer.isBuffer(req.body)) throw new OAuthError("invalid_request", "an OCSP request is sent as application/ocsp-request", { status: 415 });
    await sendOcsp(res, await mock.answerOcsp(new Uint8Array(req.body)));
  });
  router.get("/mock/ocsp/*encoded", async (req, res) => {
    const encoded = ([] as string[]).concat(req.params.encoded as string | string[]).join("/");
    // Anything that is not base64 is a malformed request, answered as OCSP answers it.
    const der = base64.test(encoded) && encoded.length % 4 === 0 ? Buffer.from(encoded, "base64") : Buffer.alloc(0);
    await sendOcsp(res, await mock.answerOcsp(new Uint8Array(der)));
  });
}

async function sendOcsp(res: Response, der: Uint8Array): Promise<void> {
  // Answers reflect the mock state the moment they are made: no HTTP cache may keep one.
  res.type("application/ocsp-response").set("Cache-Control", "no-store").send(Buffer.from(der));
}

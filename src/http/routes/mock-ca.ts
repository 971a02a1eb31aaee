import type { Router } from "express";
import type { MockEnvironment } from "../../domain/mock/mock-environment.ts";
import { x509 } from "../../domain/mock-ca/x509-runtime.ts";

/**
 * Mock mode only: the mock CA's certificate and its current CRL, at the URL
 * written into every mock certificate's CRL distribution point, so the mock
 * environment can be checked with real tools (openssl, CRL clients).
 */
export function registerMockCaRoutes(router: Router, mock: MockEnvironment): void {
  router.get("/mock/ca.crt", async (_req, res) => {
    const ca = await mock.ca();
    res.type("application/pkix-cert").set("Cache-Control", "no-store").send(Buffer.from(new x509.X509Certificate(ca.certificatePem).rawData));
  });
  router.get("/mock/ca.crl", async (_req, res) => {
    res.type("application/pkix-crl").set("Cache-Control", "no-store").send(Buffer.from(await mock.currentCrl()));
  });
}

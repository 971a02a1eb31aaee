import { X509Certificate, createHash, sign } from "node:crypto";

/**
 * A Verify request body as an eKYC back end sends it: a signature certificate
 * from the running server's mock CA, the SHA-256 digest of a document and the
 * card-style signature (RSA PKCS#1 v1.5) over it.
 */
export async function verifyRequestBody(baseUrl: string, token: string): Promise<string> {
  const response = await fetch(`${baseUrl}/service.verify.v2.MockService/CreateMockCertificate`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ type: "TYPE_JPKI_CARD_DIGITAL_SIGNATURE" }),
  });
  if (!response.ok) throw new Error(`CreateMockCertificate answered ${response.status}: ${await response.text()}`);
  const created = (await response.json()) as { certificatePem: string; privateKeyPem: string };
  const document = Buffer.from("a document the user signed with a My Number card");
  return JSON.stringify({
    certificate: new X509Certificate(created.certificatePem).raw.toString("base64"),
    hashAlgorithm: "HASH_ALGORITHM_SHA256",
    digest: createHash("sha256").update(document).digest("base64"),
    signature: sign("sha256", document, created.privateKeyPem).toString("base64"),
    identifyUser: true,
  });
}

import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import * as z from "zod";
import { readJsonFile } from "./json-file.ts";
import { certificateTypes } from "../../domain/certificates/model.ts";
import { DomainError } from "../../domain/errors.ts";
import type { TrustAnchor } from "../../domain/trust/trust-anchor.ts";

const keyUsage = z.enum(["digitalSignature", "nonRepudiation", "keyEncipherment", "dataEncipherment", "keyAgreement", "keyCertSign", "cRLSign", "encipherOnly", "decipherOnly"], { error: "must be key usage names such as digitalSignature, nonRepudiation" });
const crlUrl = z.string().refine((v) => URL.canParse(v) && ["http:", "https:", "file:"].includes(new URL(v).protocol), {
  error: "must be absolute http:, https: or file: URLs",
});
const ocspUrl = z.string().refine((v) => URL.canParse(v) && ["http:", "https:"].includes(new URL(v).protocol), {
  error: "must be absolute http: or https: URLs",
});
const oid = z.string().regex(/^[0-2](\.(0|[1-9]\d*))+$/, { error: "must be a dotted OID such as 1.2.392.200149.8.5.1.1.20" });

const fileSchema = z
  .object({
    anchors: z
      .array(
        z
          .object({
            name: z.string({ error: "must be a name" }).min(1, { error: "must not be empty" }),
            certificates: z.string({ error: "must be the path of a PEM bundle" }).min(1, { error: "must not be empty" }),
            issues: z
              .array(
                z
                  .object({
                    type: z.enum(certificateTypes, { error: `must be one of ${certificateTypes.join(", ")}` }),
                    policyOid: oid,
                    keyUsage: z.array(keyUsage).min(1, { error: "must list at least one key usage, or be left out" }).optional(),
                  })
                  .strict(),
                { error: "must be a list of the certificate types the anchor issues" },
              )
              .min(1, { error: "must list at least one certificate type" }),
            crlUrls: z.array(crlUrl, { error: "must be a list of CRL URLs" }).min(1, { error: "must list at least one URL, or be left out" }).optional(),
            ocspUrls: z.array(ocspUrl, { error: "must be a list of OCSP responder URLs" }).min(1, { error: "must list at least one URL, or be left out" }).optional(),
          })
          .strict(),
        { error: "must be a list of anchors" },
      )
      .min(1, { error: "must list at least one anchor" }),
  })
  .strict();

function fail(file: string, message: string): DomainError {
  return new DomainError("invalid_field", `trust anchors file ${file}: ${message}`, "trustAnchorsFile");
}

const pemBlock = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The configured trust anchors (SHOMEI_TRUST_ANCHORS_FILE): a JSON file
 *
 *   { "anchors": [ { "name": "JPKI signature CA",
 *                    "certificates": "jpki-sign-ca.pem",
 *                    "issues": [ { "type": "jpki_card_digital_signature",
 *                                  "policyOid": "1.2.392.200149.8.5.1.1.20",
 *                                  "keyUsage": ["digitalSignature", "nonRepudiation"] } ],
 *                    "crlUrls": ["http://crl.example/sign.crl"],
 *                    "ocspUrls": ["http://ocsp.example/sign"] } ] }
 *
 * Each entry names a PEM bundle (relative to the JSON file): every CA
 * certificate in it is an anchor with the entry's rules, so a CA's renewed
 * certificates can share one entry. crlUrls, optional, replaces the CRL
 * distribution points the anchor's certificates name, and ocspUrls, optional,
 * the OCSP responders their authorityInfoAccess names. Anything wrong is one clear error: the
 * server does not start half-trusting.
 */
export function loadTrustAnchorsFile(file: string): TrustAnchor[] {
  const document = readJsonFile(file, fileSchema, fail);
  const anchors: TrustAnchor[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of document.anchors.entries()) {
    const where = `anchors.${index} ("${entry.name}")`;
    const bundle = path.resolve(path.dirname(file), entry.certificates);
    let text: string;
    try {
      text = readFileSync(bundle, "utf8");
    } catch (error) {
      throw fail(file, `${where}: cannot read ${bundle} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    const blocks = text.match(pemBlock) ?? [];
    if (blocks.length === 0) throw fail(file, `${where}: ${bundle} holds no PEM certificate`);
    for (const [n, block] of blocks.entries()) {
      let certificate: X509Certificate;
      try {
        certificate = new X509Certificate(block);
      } catch {
        throw fail(file, `${where}: certificate ${n + 1} of ${bundle} is not a valid X.509 certificate`);
      }
      if (!certificate.ca) throw fail(file, `${where}: certificate ${n + 1} of ${bundle} (${certificate.subject.replace(/\n/g, ", ")}) is not a CA certificate`);
      const id = `sha256:${certificate.fingerprint256.replace(/:/g, "").toLowerCase()}`;
      if (seen.has(id)) throw fail(file, `${where}: certificate ${n + 1} of ${bundle} is listed twice`);
      seen.add(id);
      anchors.push({
        id,
        name: entry.name,
        certificate,
        rules: entry.issues.map((rule) => ({ type: rule.type, policyOid: rule.policyOid, keyUsages: rule.keyUsage })),
        crlUrls: entry.crlUrls,
        ocspUrls: entry.ocspUrls,
      });
    }
  }
  return anchors;
}

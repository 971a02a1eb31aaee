import { describe, expect, it } from "vitest";
import { isFetchableCrlUrl } from "../../src/domain/certificates/crl/crl-fetcher.ts";
import { isOcspUrl } from "../../src/domain/certificates/ocsp/ocsp-fetcher.ts";

describe("which CRL distribution point URLs are fetched", () => {
  it.each([
    ["http://crl.example/ca.crl", true],
    ["https://crl.example/ca.crl", true],
    ["file:///var/lib/crl/ca.crl", true],
    ["HTTP://CRL.EXAMPLE/ca.crl", true],
    ["ldap://ldap.example/cn=CA?certificateRevocationList", false],
    ["ftp://crl.example/ca.crl", false],
    ["not a url", false],
    ["", false],
  ])("%s: %s, and the same when asked again (the answer is remembered)", (url, expected) => {
    expect(isFetchableCrlUrl(url)).toBe(expected);
    expect(isFetchableCrlUrl(url)).toBe(expected);
  });

  it("keeps answering right past the number of URLs it remembers", () => {
    for (let i = 0; i < 2500; i++) expect(isFetchableCrlUrl(i % 2 ? `http://crl${i}.example/ca.crl` : `ldap://crl${i}.example/`)).toBe(i % 2 === 1);
    expect(isFetchableCrlUrl("http://crl1.example/ca.crl")).toBe(true);
    expect(isFetchableCrlUrl("ldap://crl0.example/")).toBe(false);
  });
});

describe("which OCSP responder URLs are asked", () => {
  it.each([
    ["http://ocsp.example/", true],
    ["https://ocsp.example/path", true],
    ["HTTPS://OCSP.EXAMPLE", true],
    ["file:///var/lib/ocsp", false],
    ["ldap://ocsp.example/", false],
    ["http//missing-colon", false],
    ["", false],
  ])("%s: %s, and the same when asked again", (url, expected) => {
    expect(isOcspUrl(url)).toBe(expected);
    expect(isOcspUrl(url)).toBe(expected);
  });

  it("remembers apart from the CRL test: a file: URL is a list's, never a responder's", () => {
    expect(isFetchableCrlUrl("file:///srv/x")).toBe(true);
    expect(isOcspUrl("file:///srv/x")).toBe(false);
  });
});

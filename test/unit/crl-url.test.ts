import { describe, expect, it } from "vitest";
import { isFetchableCrlUrl } from "../../src/domain/certificates/crl/fetch-crl.ts";

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

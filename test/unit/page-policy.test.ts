import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, policyWithFormTargets, withPageScripts } from "../../src/http/middleware/page-headers.ts";

const formAction = (policy: string) => policy.split(";").map((d) => d.trim()).find((d) => d.startsWith("form-action"));

describe("page policies", () => {
  it("every page: forms to this origin only, no <base>", () => {
    expect(formAction(contentSecurityPolicy)).toBe("form-action 'self'");
    expect(contentSecurityPolicy).toContain("base-uri 'none'");
  });

  it.each([
    [["https://app.example.com/callback?x=1"], "form-action 'self' https://app.example.com"],
    [["https://app.example.com:8443/a", "https://app.example.com:8443/b"], "form-action 'self' https://app.example.com:8443"],
    [["http://localhost:3000/cb", "https://rp.example/cb"], "form-action 'self' http://localhost:3000 https://rp.example"],
    [["com.example.app:/oauth/callback"], "form-action 'self' com.example.app:"],
    [["not a url", "https://bad host/cb"], "form-action 'self'"],
    [[], "form-action 'self'"],
  ])("names where a page's forms may end: %j", (targets, expected) => {
    expect(formAction(policyWithFormTargets(targets))).toBe(expected);
  });

  it("a mock card page keeps its form targets and adds scripts from this origin", () => {
    const policy = withPageScripts(policyWithFormTargets(["https://app.example.com/cb"]));
    expect(policy).toContain("script-src 'self'");
    expect(formAction(policy)).toBe("form-action 'self' https://app.example.com");
  });
});

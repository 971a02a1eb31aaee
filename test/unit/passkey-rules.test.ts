import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadAcrPolicyFile } from "../../src/adapters/files/acr-policy-file.ts";
import { loadConfig } from "../../src/config/load.ts";
import { acrForMethods, defaultAcrPolicy, methodsToReach } from "../../src/domain/oidc/acr.ts";
import { levelToConfirmBeforeAdding, recentConfirmationMs } from "../../src/domain/oidc/passkeys/adding-rule.ts";
import { amrOf } from "../../src/domain/oidc/passkeys/passkeys.ts";
import { relyingPartyOf } from "../../src/domain/oidc/passkeys/relying-party.ts";

const now = 1_750_000_000_000;

describe("what a passkey says and earns", () => {
  it("amr: passkey, swk for a synced (backup-eligible) passkey or hwk for a device-bound one, and user", () => {
    expect(amrOf({ backupEligible: false })).toEqual(["passkey", "hwk", "user"]);
    expect(amrOf({ backupEligible: true })).toEqual(["passkey", "swk", "user"]);
  });

  it("earns high in the built-in policy, alone, whichever key kind", () => {
    expect(acrForMethods(defaultAcrPolicy, amrOf({ backupEligible: false }))).toBe("high");
    expect(acrForMethods(defaultAcrPolicy, amrOf({ backupEligible: true }))).toBe("high");
    expect(methodsToReach(defaultAcrPolicy, "high", ["pwd", "passkey"])).toEqual(["passkey"]);
    expect(methodsToReach(defaultAcrPolicy, "very_high", ["pwd", "passkey"])).toBeUndefined();
  });

  it("a policy file may name passkey, and give it another level", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "shomei-passkey-policy-"));
    try {
      const file = path.join(dir, "acr.json");
      writeFileSync(file, JSON.stringify({ levels: [{ name: "low", methods: [["pwd"], ["passkey"]] }, { name: "high", methods: [["pwd", "otp"]] }] }));
      const policy = loadAcrPolicyFile(file);
      expect(acrForMethods(policy, amrOf({ backupEligible: false }))).toBe("low");
      writeFileSync(file, JSON.stringify({ levels: [{ name: "low", methods: [["passkeys"]] }] }));
      expect(() => loadAcrPolicyFile(file)).toThrow(/passkey/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("adding a passkey: who must confirm first", () => {
  const session = (acr: string, agoMs: number) => ({ acr, authTime: now - agoMs });

  it.each([
    ["password only, any session", ["pwd"], session("low", 3_600_000), undefined],
    ["password and code, a password session", ["pwd", "otp"], session("low", 1000), "high"],
    ["password and code, a recent high session", ["pwd", "otp"], session("high", 1000), undefined],
    ["password and code, a high session too old", ["pwd", "otp"], session("high", recentConfirmationMs + 1), "high"],
    ["a passkey already, a password session", ["pwd", "passkey"], session("low", 1000), "high"],
    ["a signature card (very_high): the passkey's level is enough", ["pwd", "jpki_sig"], session("high", 1000), undefined],
    ["a session from the future is not recent", ["pwd", "otp"], session("high", -60_000), "high"],
  ] as const)("%s", (_name, enrolled, current, expected) => {
    expect(levelToConfirmBeforeAdding(defaultAcrPolicy, current, enrolled, now)).toBe(expected);
  });
});

describe("the relying party", () => {
  it("by default the issuer's host and origin; never anything from a request", () => {
    expect(relyingPartyOf("https://id.example.jp", {})).toEqual({ id: "id.example.jp", name: "shomei", origins: ["https://id.example.jp"] });
    expect(relyingPartyOf("https://id.example.jp", { rpId: "example.jp", origins: ["https://id.example.jp", "https://login.example.jp"] }).origins).toHaveLength(2);
  });

  it("refuses origins outside the RP ID", () => {
    expect(() => relyingPartyOf("https://id.example.jp", { rpId: "example.jp", origins: ["https://evil.example"] })).toThrow(/not on the RP ID/);
    expect(() => relyingPartyOf("https://notexample.jp", { rpId: "example.jp" })).toThrow(/not on the RP ID/);
  });

  it("settings: SHOMEI_WEBAUTHN_RP_ID is a domain, SHOMEI_WEBAUTHN_ORIGINS a list of bare origins", () => {
    const config = loadConfig({ env: { SHOMEI_WEBAUTHN_RP_ID: "example.jp", SHOMEI_WEBAUTHN_ORIGINS: "https://id.example.jp, https://a.example.jp" } });
    expect(config.webauthnRpId).toBe("example.jp");
    expect(config.webauthnOrigins).toEqual(["https://id.example.jp", "https://a.example.jp"]);
    expect(() => loadConfig({ env: { SHOMEI_WEBAUTHN_RP_ID: "https://example.jp" } })).toThrow(/SHOMEI_WEBAUTHN_RP_ID/);
    expect(() => loadConfig({ env: { SHOMEI_WEBAUTHN_ORIGINS: "https://id.example.jp/path" } })).toThrow(/SHOMEI_WEBAUTHN_ORIGINS/);
  });
});

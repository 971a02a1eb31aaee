import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { acrForMethods, defaultAcrPolicy, methodsToReach, reachableAcrs } from "../../src/domain/oidc/acr.ts";
import { challengeDigest, challengeText } from "../../src/domain/oidc/jpki/challenges.ts";
import { methodOf } from "../../src/domain/oidc/jpki/jpki-sign-in.ts";
import { certificateDer, signatureOctets } from "../../src/domain/oidc/jpki/signed-challenge.ts";

describe("JPKI methods in the built-in ACR policy", () => {
  it("a signature certificate earns very_high, a user authentication certificate high, with the amr extras ignored", () => {
    expect(acrForMethods(defaultAcrPolicy, ["jpki_sig", "hwk", "sc"])).toBe("very_high");
    expect(acrForMethods(defaultAcrPolicy, ["jpki_auth", "hwk", "sc"])).toBe("high");
    expect(acrForMethods(defaultAcrPolicy, ["hwk", "sc"])).toBeUndefined();
  });

  it("the step-up asks for the card only where nothing weaker reaches the level", () => {
    const enrolled = ["pwd", "otp", "jpki_sig"] as const;
    expect(reachableAcrs(defaultAcrPolicy, [...enrolled])).toEqual(["low", "high", "very_high"]);
    expect(methodsToReach(defaultAcrPolicy, "very_high", [...enrolled])).toEqual(["jpki_sig"]);
    expect(methodsToReach(defaultAcrPolicy, "high", [...enrolled])).toEqual(["pwd", "otp"]);
    // Of two ways to high, the one of fewer steps.
    expect(methodsToReach(defaultAcrPolicy, "high", ["pwd", "otp", "jpki_auth"])).toEqual(["jpki_auth"]);
    expect(methodsToReach(defaultAcrPolicy, "very_high", ["pwd", "otp", "jpki_auth"])).toBeUndefined();
  });

  it("certificate types map to their methods", () => {
    expect(methodOf("jpki_card_digital_signature")).toBe("jpki_sig");
    expect(methodOf("jpki_mobile_digital_signature")).toBe("jpki_sig");
    expect(methodOf("jpki_card_user_authentication")).toBe("jpki_auth");
    expect(methodOf("jpki_mobile_user_authentication")).toBe("jpki_auth");
  });
});

describe("the signed challenge", () => {
  it("the card signs the SHA-256 of fixed words and the challenge", () => {
    expect(challengeText("abc")).toBe("shomei JPKI sign-in abc");
    expect(challengeDigest("abc")).toEqual(createHash("sha256").update("shomei JPKI sign-in abc").digest());
  });

  it("a certificate is PEM or base64 of DER; anything else is certificate_invalid", () => {
    const der = Buffer.from([0x30, 0x82, 0x01, 0x02, 0xff, 0xfe]);
    const pem = `-----BEGIN CERTIFICATE-----\n${der.toString("base64")}\n-----END CERTIFICATE-----\n`;
    expect(certificateDer(pem)).toEqual(der);
    expect(certificateDer(der.toString("base64"))).toEqual(der);
    expect(certificateDer(der.toString("base64url"))).toEqual(der);
    for (const bad of ["", "   ", "not base64!", "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----", "A".repeat(30_000)]) {
      expect(() => certificateDer(bad), JSON.stringify(bad.slice(0, 20))).toThrow(expect.objectContaining({ code: "certificate_invalid", status: 400 }));
    }
  });

  it("a signature is base64 of at most 1024 octets; anything else is signature_invalid", () => {
    expect(signatureOctets("AAEC")).toEqual(Buffer.from([0, 1, 2]));
    for (const bad of ["", "%%%", "A".repeat(2000)]) {
      expect(() => signatureOctets(bad)).toThrow(expect.objectContaining({ code: "signature_invalid", status: 400 }));
    }
  });
});

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { comparableHtu } from "../../src/domain/oidc/dpop/htu.ts";
import { parseDpopJkt } from "../../src/domain/oidc/dpop/jkt.ts";
import { DpopNonces } from "../../src/domain/oidc/dpop/nonce.ts";
import { verifyProof } from "../../src/domain/oidc/dpop/proof.ts";
import { OAuthError } from "../../src/domain/oidc/oauth-error.ts";
import { dpopKey, dpopProof } from "../support/dpop.ts";

const policy = { maxAgeSeconds: 60, futureSkewSeconds: 10 };
const url = "https://op.example/api/oidc/v1/token";

describe("htu comparison (RFC 9449 section 4.3)", () => {
  it.each([
    ["https://op.example/api/oidc/v1/token", "https://op.example/api/oidc/v1/token"],
    ["https://op.example/api/oidc/v1/token?x=1#f", "https://op.example/api/oidc/v1/token"],
    ["HTTPS://OP.EXAMPLE:443/api/oidc/v1/token", "https://op.example/api/oidc/v1/token"],
    ["http://localhost:8080/a", "http://localhost:8080/a"],
  ])("%s → %s", (value, expected) => {
    expect(comparableHtu(value)).toBe(expected);
  });

  it.each(["not a url", "/relative", "ftp://op.example/token", "urn:x:y"])("%s is not a usable htu", (value) => {
    expect(comparableHtu(value)).toBeUndefined();
  });

  it("keeps the path's case and a trailing slash: they name other resources", () => {
    expect(comparableHtu("https://op.example/API/oidc/v1/token")).not.toBe(comparableHtu(url));
    expect(comparableHtu(`${url}/`)).not.toBe(comparableHtu(url));
  });
});

describe("dpop_jkt", () => {
  it("accepts a 43-character base64url thumbprint, refuses anything else as invalid_request", () => {
    const jkt = randomBytes(32).toString("base64url");
    expect(parseDpopJkt(jkt)).toBe(jkt);
    expect(parseDpopJkt(undefined)).toBeUndefined();
    for (const bad of ["", "short", `${jkt}=`, `${jkt.slice(0, 42)}+`]) {
      expect(() => parseDpopJkt(bad)).toThrow(OAuthError);
    }
  });
});

describe("server nonces", () => {
  const slot = 5 * 60 * 1000;
  const nonces = new DpopNonces(randomBytes(32), slot);
  const t = 1_800_000_000_000;

  it("a nonce is good in its slot and the next, not later, and not under another key", () => {
    const nonce = nonces.current(t);
    expect(nonces.accepts(nonce, t)).toBe(true);
    expect(nonces.accepts(nonce, t + slot)).toBe(true);
    expect(nonces.accepts(nonce, t + 2 * slot)).toBe(false);
    expect(new DpopNonces(randomBytes(32), slot).accepts(nonce, t)).toBe(false);
    expect(nonces.accepts(`${nonce}x`, t)).toBe(false);
    expect(nonces.accepts("", t)).toBe(false);
  });
});

describe("verifyProof", () => {
  it("returns the key's thumbprint, jti, iat and alg for a good proof", async () => {
    const key = await dpopKey();
    const now = Date.now();
    const verified = await verifyProof(await dpopProof(key, { htu: `${url}?q=1`, jti: "j-1", iat: Math.floor(now / 1000) }), { method: "POST", url }, policy, now);
    expect(verified).toEqual({ jkt: key.jkt, jti: "j-1", iat: Math.floor(now / 1000), nonce: undefined, alg: "ES256" });
  });

  it("checks ath only when an access token comes with the proof", async () => {
    const key = await dpopKey();
    const now = Date.now();
    const proof = await dpopProof(key, { htm: "GET", htu: url, accessToken: "at-1" });
    await expect(verifyProof(proof, { method: "GET", url, accessToken: "at-1" }, policy, now)).resolves.toMatchObject({ jkt: key.jkt });
    await expect(verifyProof(proof, { method: "GET", url, accessToken: "at-2" }, policy, now)).rejects.toMatchObject({
      error: "invalid_dpop_proof",
      description: "the DPoP proof's ath does not match the access token",
    });
  });

  it("the iat window edges: 60 s old passes, 61 s does not; 10 s ahead passes, 11 s does not", async () => {
    const key = await dpopKey();
    const now = 1_800_000_000_000;
    const at = async (iat: number) => verifyProof(await dpopProof(key, { htu: url, iat }), { method: "POST", url }, policy, now);
    const s = now / 1000;
    await expect(at(s - 60)).resolves.toBeDefined();
    await expect(at(s - 61)).rejects.toMatchObject({ error: "invalid_dpop_proof" });
    await expect(at(s + 10)).resolves.toBeDefined();
    await expect(at(s + 11)).rejects.toMatchObject({ error: "invalid_dpop_proof" });
  });
});

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DpopNonces } from "../../src/domain/oidc/dpop/nonce.ts";
import { DpopProofs, type ProofRequirements } from "../../src/domain/oidc/dpop/dpop-proofs.ts";
import { BindingRefusal, TokenBinding, type PresentedToken } from "../../src/domain/oidc/dpop/token-binding.ts";
import { fapi2ProofRequirements } from "../../src/domain/oidc/fapi2-profile.ts";
import { ManualClock } from "../support/in-memory/clock.ts";
import { dpopKey, dpopProof, type DpopKey } from "../support/dpop.ts";

/*
 * The one rule for presenting an access token at a resource (userinfo,
 * grant management, the RPCs): which presentations are admitted, which
 * reason and challenge each refusal gets, and when a server nonce is asked
 * for or handed out. Time is the test's clock.
 */
const url = "https://op.example/service.verify.v2.CertificateService/CheckCertificateStatus";
const slot = 5 * 60 * 1000;
const token = "shmat_token";

/** A binding over proofs whose replay record is a set (single use is DpopProofStore's contract, tested on the databases). */
function binding(options: { everyProof?: boolean } = {}) {
  const clock = new ManualClock();
  const nonces = new DpopNonces(randomBytes(32), slot);
  const used = new Set<string>();
  const store = { useOnce: async (key: string) => !used.has(key) && !!used.add(key) };
  const proofs = new DpopProofs(store, { maxAgeSeconds: 60, futureSkewSeconds: 10, nonces: options.everyProof ? nonces : undefined, noncesOnRequest: nonces }, clock.clock);
  return { clock, nonces, tokenBinding: new TokenBinding(proofs) };
}

async function presented(clock: ManualClock, key: DpopKey | undefined, extra: { nonce?: string; accessToken?: string } = {}): Promise<PresentedToken> {
  const proofs = key ? [await dpopProof(key, { htu: url, accessToken: extra.accessToken ?? token, iat: Math.floor(clock.now / 1000), ...(extra.nonce ? { nonce: extra.nonce } : {}) })] : [];
  return { scheme: "dpop", token, proofs, method: "POST", url };
}

async function refusal(admission: Promise<unknown>): Promise<{ reason: string; scheme: string; challenge: string; nonce: string | undefined }> {
  const error = await admission.then(
    () => expect.unreachable("admitted"),
    (e: unknown) => e,
  );
  if (!(error instanceof BindingRefusal)) throw error;
  return { reason: error.reason, scheme: error.scheme, challenge: error.challenge(), nonce: error.nonce };
}

const nonceRequired: ProofRequirements = { requireNonce: true };

describe("TokenBinding: the scheme the token's binding needs", () => {
  it("a Bearer token as Bearer is admitted without a proof", async () => {
    const { tokenBinding } = binding();
    expect(await tokenBinding.admit({ scheme: "bearer", token, proofs: [], method: "POST", url }, null, {})).toEqual({ provenJkt: undefined, freshNonce: undefined });
  });

  it("a DPoP-bound token as Bearer → invalid_token with a DPoP challenge", async () => {
    const { tokenBinding } = binding();
    const key = await dpopKey();
    expect(await refusal(tokenBinding.admit({ scheme: "bearer", token, proofs: [], method: "POST", url }, key.jkt, {}))).toEqual({
      reason: "invalid_token",
      scheme: "DPoP",
      challenge: 'DPoP realm="shomei", error="invalid_token", error_description="the access token is DPoP-bound: send it with the DPoP scheme and a proof", algs="ES256 PS256 RS256 EdDSA"',
      nonce: undefined,
    });
  });

  it("a Bearer token as DPoP → invalid_token with a Bearer challenge", async () => {
    const { clock, tokenBinding } = binding();
    const key = await dpopKey();
    expect(await refusal(tokenBinding.admit(await presented(clock, key), null, {}))).toEqual({
      reason: "invalid_token",
      scheme: "Bearer",
      challenge: 'Bearer realm="shomei", error="invalid_token", error_description="the access token is not DPoP-bound: send it with the Bearer scheme"',
      nonce: undefined,
    });
  });

  it("a DPoP-bound token without a proof, with another key's, or with one for another token → invalid_dpop_proof", async () => {
    const { clock, tokenBinding } = binding();
    const key = await dpopKey();
    for (const [name, p] of [
      ["no proof", await presented(clock, undefined)],
      ["another key", await presented(clock, await dpopKey())],
      ["another token's ath", await presented(clock, key, { accessToken: "another" })],
    ] as const) {
      expect((await refusal(tokenBinding.admit(p, key.jkt, {}))).reason, name).toBe("invalid_dpop_proof");
    }
    expect(await tokenBinding.admit(await presented(clock, key), key.jkt, {})).toEqual({ provenJkt: key.jkt, freshNonce: undefined });
  });

  it("a fapi2 client's proof signed RS256 → invalid_dpop_proof", async () => {
    const { clock, tokenBinding } = binding();
    const key = await dpopKey("RS256");
    const requirements = fapi2ProofRequirements({ profile: "fapi2" }, { requireDpopNonce: false });
    expect((await refusal(tokenBinding.admit(await presented(clock, key), key.jkt, requirements))).reason).toBe("invalid_dpop_proof");
  });
});

describe("TokenBinding: server nonces (RFC 9449 section 9)", () => {
  it("when the client must use nonces: none → use_dpop_nonce with the current one; with it, admitted", async () => {
    const { clock, nonces, tokenBinding } = binding();
    const key = await dpopKey();
    const refused = await refusal(tokenBinding.admit(await presented(clock, key), key.jkt, nonceRequired));
    expect(refused).toMatchObject({ reason: "use_dpop_nonce", scheme: "DPoP", nonce: nonces.current(clock.now) });
    expect(refused.challenge).toMatch(/^DPoP realm="shomei", error="use_dpop_nonce", error_description="[^"]+", algs="ES256 PS256 RS256 EdDSA"$/);
    expect(await tokenBinding.admit(await presented(clock, key, { nonce: refused.nonce! }), key.jkt, nonceRequired)).toEqual({ provenJkt: key.jkt, freshNonce: undefined });
  });

  it("a nonce of the slot before still passes, and the answer hands out the current one; two slots old → use_dpop_nonce", async () => {
    const { clock, nonces, tokenBinding } = binding();
    const key = await dpopKey();
    const old = nonces.current(clock.now);
    clock.advance(slot);
    const current = nonces.current(clock.now);
    expect(current).not.toBe(old);
    expect(await tokenBinding.admit(await presented(clock, key, { nonce: old }), key.jkt, nonceRequired)).toEqual({ provenJkt: key.jkt, freshNonce: current });
    clock.advance(slot);
    expect(await refusal(tokenBinding.admit(await presented(clock, key, { nonce: old }), key.jkt, nonceRequired))).toMatchObject({
      reason: "use_dpop_nonce",
      nonce: nonces.current(clock.now),
    });
  });

  it("without the setting, a client that need not use nonces is admitted without one; with it (every proof), it is not", async () => {
    const key = await dpopKey();
    const relaxed = binding();
    expect((await relaxed.tokenBinding.admit(await presented(relaxed.clock, key), key.jkt, {})).provenJkt).toBe(key.jkt);
    const strict = binding({ everyProof: true });
    expect((await refusal(strict.tokenBinding.admit(await presented(strict.clock, key), key.jkt, {}))).reason).toBe("use_dpop_nonce");
  });

  it("a fapi2 client needs a nonce only under SHOMEI_FAPI2_DPOP_REQUIRE_NONCE", async () => {
    const { clock, tokenBinding } = binding();
    const key = await dpopKey();
    const fapi2 = (requireDpopNonce: boolean) => fapi2ProofRequirements({ profile: "fapi2" }, { requireDpopNonce });
    expect((await tokenBinding.admit(await presented(clock, key), key.jkt, fapi2(false))).provenJkt).toBe(key.jkt);
    expect((await refusal(tokenBinding.admit(await presented(clock, key), key.jkt, fapi2(true)))).reason).toBe("use_dpop_nonce");
  });
});

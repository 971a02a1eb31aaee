import { createHash, createPrivateKey, sign } from "node:crypto";
import type { CDPSession, Page } from "playwright-core";

/** What WebAuthn.getCredentials answers for one credential (the DevTools protocol's Credential). */
export interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId?: string;
  privateKey: string;
  userHandle?: string;
  signCount: number;
}

export interface VirtualAuthenticator {
  cdp: CDPSession;
  authenticatorId: string;
  credentials(): Promise<VirtualCredential[]>;
}

/**
 * A virtual platform authenticator in the page's browser (the DevTools
 * protocol's WebAuthn domain): it holds discoverable credentials, verifies
 * its user (unless `isUserVerified: false`, which fails every ceremony as a
 * cancelled one does) and answers without a dialog.
 */
export async function addVirtualAuthenticator(page: Page, options: Record<string, unknown> = {}): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      ctap2Version: "ctap2_1",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
      ...options,
    },
  });
  return {
    cdp,
    authenticatorId,
    credentials: async () => ((await cdp.send("WebAuthn.getCredentials", { authenticatorId })) as { credentials: VirtualCredential[] }).credentials,
  };
}

/**
 * An assertion made in this process with a credential's private key (as the
 * virtual authenticator gives it), for what no honest browser would send: a
 * foreign origin or RP ID in what is signed. base64url throughout, as
 * @simplewebauthn/browser sends it.
 */
export function craftAssertion(credential: VirtualCredential, input: { challenge: string; origin: string; rpId: string; signCount: number }): string {
  const clientDataJSON = Buffer.from(JSON.stringify({ type: "webauthn.get", challenge: input.challenge, origin: input.origin, crossOrigin: false }));
  const counter = Buffer.alloc(4);
  counter.writeUInt32BE(input.signCount);
  // User present (0x01) and verified (0x04).
  const authenticatorData = Buffer.concat([createHash("sha256").update(input.rpId).digest(), Buffer.from([0x05]), counter]);
  const key = createPrivateKey({ key: Buffer.from(credential.privateKey, "base64"), format: "der", type: "pkcs8" });
  // Ed25519 (Chromium's choice when the options name it first) hashes inside; ECDSA P-256 signs a SHA-256 digest.
  const signature = sign(key.asymmetricKeyType === "ed25519" ? null : "sha256", Buffer.concat([authenticatorData, createHash("sha256").update(clientDataJSON).digest()]), key);
  const id = Buffer.from(credential.credentialId, "base64").toString("base64url");
  return JSON.stringify({
    id,
    rawId: id,
    type: "public-key",
    clientExtensionResults: {},
    response: {
      clientDataJSON: clientDataJSON.toString("base64url"),
      authenticatorData: authenticatorData.toString("base64url"),
      signature: signature.toString("base64url"),
      ...(credential.userHandle ? { userHandle: Buffer.from(credential.userHandle, "base64").toString("base64url") } : {}),
    },
  });
}

/** In the page (addInitScript): a browser that offers no passkeys in a field's suggestions, so only the button starts a ceremony. */
export function withoutConditionalRequests(): void {
  const credential = (globalThis as unknown as { PublicKeyCredential?: { isConditionalMediationAvailable?: () => Promise<boolean> } }).PublicKeyCredential;
  if (credential) credential.isConditionalMediationAvailable = async () => false;
}

import { createHash, randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";

/** A client's DPoP key pair, its public JWK and thumbprint. */
export interface DpopKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
  privateJwk: JWK;
  jkt: string;
  alg: string;
}

export async function dpopKey(alg = "ES256"): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { privateKey, publicJwk, privateJwk: await exportJWK(privateKey), jkt: await calculateJwkThumbprint(publicJwk, "sha256"), alg };
}

export interface ProofOptions {
  htm?: string;
  htu: string;
  /** The access token the proof goes with (its `ath`). */
  accessToken?: string;
  ath?: string;
  jti?: string;
  /** Seconds since the epoch; now by default. */
  iat?: number;
  nonce?: string;
  typ?: string;
  /** The header's jwk; the key's public JWK by default. */
  jwk?: JWK;
  /** Claims to leave out. */
  omit?: string[];
}

export function accessTokenHash(accessToken: string): string {
  return createHash("sha256").update(accessToken).digest("base64url");
}

/** A DPoP proof (RFC 9449 section 4.2) signed with the key; every part can be changed to make a bad one. */
export async function dpopProof(key: DpopKey, options: ProofOptions): Promise<string> {
  const claims: Record<string, unknown> = {
    jti: options.jti ?? randomUUID(),
    htm: options.htm ?? "POST",
    htu: options.htu,
    iat: options.iat ?? Math.floor(Date.now() / 1000),
    ...(options.nonce !== undefined ? { nonce: options.nonce } : {}),
    ...(options.ath !== undefined ? { ath: options.ath } : options.accessToken !== undefined ? { ath: accessTokenHash(options.accessToken) } : {}),
  };
  for (const name of options.omit ?? []) delete claims[name];
  return new SignJWT(claims).setProtectedHeader({ typ: options.typ ?? "dpop+jwt", alg: key.alg, jwk: options.jwk ?? key.publicJwk }).sign(key.privateKey);
}

/** An unsigned proof (`alg: none`), as an attacker would send it. */
export function unsignedProof(key: DpopKey, htu: string): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ typ: "dpop+jwt", alg: "none", jwk: key.publicJwk })}.${part({ jti: randomUUID(), htm: "POST", htu, iat: Math.floor(Date.now() / 1000) })}.`;
}

/** A proof MACed with HS256 (a symmetric key proves nothing), carrying a public jwk. */
export function hmacProof(key: DpopKey, htu: string): Promise<string> {
  return new SignJWT({ jti: randomUUID(), htm: "POST", htu, iat: Math.floor(Date.now() / 1000) })
    .setProtectedHeader({ typ: "dpop+jwt", alg: "HS256", jwk: key.publicJwk })
    .sign(new TextEncoder().encode("a shared secret of at least 32 bytes!"));
}

/**
 * POSTs a form with the given headers as separate header lines (an array
 * value becomes one line per element), which fetch cannot do: it joins them.
 */
export function postWithHeaderLines(
  url: string,
  form: Record<string, string>,
  headers: Record<string, string | string[]>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown> }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

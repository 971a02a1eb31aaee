/**
 * Signing in without a browser, for the OpenID Connect comparisons: a cookie
 * jar, redirects followed by hand, forms submitted as a user would (shomei's
 * login and consent pages; node-oidc-provider's interactions complete on
 * their own, see bench/servers/oidc-provider.ts), until the redirect to the
 * client brings a code. Then the code redeemed for tokens.
 */
import { createHash, randomBytes } from "node:crypto";

/** Where each server has its endpoints, and how a user answers its pages. */
export interface Provider {
  /** The issuer, e.g. http://127.0.0.1:<port>. */
  base: string;
  authorizePath: string;
  parPath: string;
  tokenPath: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** The fields a user fills into a page (by the page's path), beside its CSRF token. */
  pageFields: Record<string, Record<string, string>>;
}

interface Cookie {
  value: string;
  path: string;
}

export class CookieJar {
  private readonly cookies = new Map<string, Cookie>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const attribute = (key: string) => attributes.map((a) => a.trim()).find((a) => a.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1);
      const expires = attribute("expires");
      if (attribute("max-age") === "0" || (expires && Date.parse(expires) <= Date.now())) this.cookies.delete(name);
      else this.cookies.set(name, { value, path: attribute("path") ?? "/" });
    }
  }

  /** The Cookie header for a request to `path`. */
  header(path = "/"): string {
    return [...this.cookies]
      .filter(([, cookie]) => path.startsWith(cookie.path))
      .map(([name, cookie]) => `${name}=${cookie.value}`)
      .join("; ");
  }
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export function basicAuthorization(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`;
}

export function authorizeQuery(provider: Provider, scope: string, challenge: string, extra: Record<string, string> = {}): string {
  return new URLSearchParams({
    client_id: provider.clientId,
    redirect_uri: provider.redirectUri,
    response_type: "code",
    scope,
    state: "bench-state",
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...extra,
  }).toString();
}

/**
 * Follows an authorization request from `target` to the client's redirect,
 * filling in the pages on the way; returns the code.
 */
export async function followToCode(provider: Provider, jar: CookieJar, target: string): Promise<string> {
  let url = new URL(target, provider.base);
  let method = "GET";
  let body: string | undefined;
  for (let step = 0; step < 12; step++) {
    const cookie = jar.header(url.pathname);
    const response = await fetch(url, {
      method,
      redirect: "manual",
      headers: { accept: "text/html", ...(cookie ? { cookie } : {}), ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
      ...(body ? { body } : {}),
    });
    jar.store(response);
    const text = await response.text();
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      if (`${next.origin}${next.pathname}` === provider.redirectUri) {
        const code = next.searchParams.get("code");
        if (!code) throw new Error(`the authorization ended without a code: ${location}`);
        return code;
      }
      [url, method, body] = [next, "GET", undefined];
      continue;
    }
    const fields = provider.pageFields[url.pathname];
    const csrf = /name="csrf" value="([^"]*)"/.exec(text)?.[1];
    if (response.status !== 200 || !fields || csrf === undefined) {
      throw new Error(`unexpected answer on the way to a code: ${method} ${url.pathname} -> ${response.status} ${text.slice(0, 300)}`);
    }
    [method, body] = ["POST", new URLSearchParams({ csrf, ...fields }).toString()];
  }
  throw new Error("too many steps on the way to a code");
}

/** Redeems a code (PKCE) at the token endpoint; returns the answer's refresh_token. */
export async function redeem(provider: Provider, code: string, verifier: string): Promise<string> {
  const response = await fetch(new URL(provider.tokenPath, provider.base), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: basicAuthorization(provider.clientId, provider.clientSecret) },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: provider.redirectUri, code_verifier: verifier }).toString(),
  });
  const json = (await response.json()) as { refresh_token?: string };
  if (response.status !== 200 || !json.refresh_token) throw new Error(`the code gave no refresh token: ${response.status} ${JSON.stringify(json)}`);
  return json.refresh_token;
}

/**
 * A signed-in browser with a grant of `openid profile email offline_access`
 * for the client: a later authorization request within it skips login and
 * consent.
 */
export async function signIn(provider: Provider, extra: Record<string, string> = {}): Promise<CookieJar> {
  const jar = new CookieJar();
  const { challenge } = pkcePair();
  await followToCode(provider, jar, `${provider.authorizePath}?${authorizeQuery(provider, "openid profile email offline_access", challenge, extra)}`);
  return jar;
}

/** `count` fresh refresh tokens, each from its own authorization in the signed-in browser. */
export async function mintRefreshTokens(provider: Provider, jar: CookieJar, count: number, extra: Record<string, string> = {}): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    const { verifier, challenge } = pkcePair();
    const code = await followToCode(provider, jar, `${provider.authorizePath}?${authorizeQuery(provider, "openid profile offline_access", challenge, extra)}`);
    tokens.push(await redeem(provider, code, verifier));
  }
  return tokens;
}

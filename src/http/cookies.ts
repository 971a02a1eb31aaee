import type { IncomingMessage, ServerResponse } from "node:http";

/** Reads one cookie from the request (no dependency needed for the few cookies shomei sets). */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{1,128}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}

export interface CookieNames {
  session: string;
  browser: string;
  /** The language of the user's last sign-in pages, for pages outside an interaction (not a secret). */
  locale: string;
  secure: boolean;
}

/**
 * Under https the cookies take the __Host- prefix (Secure, Path=/, no Domain:
 * no subdomain can set or read them); over plain http (development) they
 * cannot, and keep plain names.
 */
export function cookieNames(baseUrl: string): CookieNames {
  const secure = baseUrl.startsWith("https:");
  return {
    session: secure ? "__Host-shomei_session" : "shomei_session",
    browser: secure ? "__Host-shomei_browser" : "shomei_browser",
    locale: secure ? "__Host-shomei_locale" : "shomei_locale",
    secure,
  };
}

/** Set-Cookie lines are added beside any already set (on a plain ServerResponse as on Express's). */
export function setCookie(res: ServerResponse, names: CookieNames, name: string, value: string, maxAgeSeconds: number): void {
  res.appendHeader(
    "Set-Cookie",
    `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${names.secure ? "; Secure" : ""}`,
  );
}

export function clearCookie(res: ServerResponse, names: CookieNames, name: string): void {
  res.appendHeader("Set-Cookie", `${name}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${names.secure ? "; Secure" : ""}`);
}

/**
 * The cookies one browser keeps for one server, enough for shomei's cookies
 * (all Path=/, no Domain): Set-Cookie lines are stored, a Max-Age of 0 or an
 * empty value removes the cookie, and `header()` gives the Cookie header to
 * send back.
 */
export class CookieJar {
  private readonly values = new Map<string, string>();
  /** Every Set-Cookie line received, oldest first, for checks on attributes. */
  readonly received: string[] = [];

  /** Takes the Set-Cookie lines of a response. */
  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      this.received.push(line);
      const parsed = parseSetCookie(line);
      if (!parsed) continue;
      const maxAge = parsed.attributes.get("max-age");
      if (parsed.value === "" || (maxAge !== undefined && Number(maxAge) <= 0)) this.values.delete(parsed.name);
      else this.values.set(parsed.name, parsed.value);
    }
  }

  get(name: string): string | undefined {
    return this.values.get(name);
  }

  /** The Cookie request header, or undefined when the jar is empty. */
  header(): string | undefined {
    if (this.values.size === 0) return undefined;
    return [...this.values].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  /** The attributes (names lower-cased) of the latest Set-Cookie line for `name`, or undefined when none was received. */
  attributesOf(name: string): Map<string, string> | undefined {
    for (let i = this.received.length - 1; i >= 0; i--) {
      const parsed = parseSetCookie(this.received[i]!);
      if (parsed?.name === name) return parsed.attributes;
    }
    return undefined;
  }
}

function parseSetCookie(line: string): { name: string; value: string; attributes: Map<string, string> } | undefined {
  const [pair = "", ...rest] = line.split(";");
  const eq = pair.indexOf("=");
  if (eq <= 0) return undefined;
  const attributes = new Map<string, string>();
  for (const part of rest) {
    const trimmed = part.trim();
    if (!trimmed) continue;
    const i = trimmed.indexOf("=");
    if (i < 0) attributes.set(trimmed.toLowerCase(), "");
    else attributes.set(trimmed.slice(0, i).trim().toLowerCase(), trimmed.slice(i + 1).trim());
  }
  return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), attributes };
}

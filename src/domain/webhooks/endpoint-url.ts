import { invalidField } from "../errors.ts";
import { isNonPublicAddress } from "./private-address.ts";

export const maxUrlLength = 2048;

/**
 * An endpoint's URL, checked when it is registered: absolute, `https:`
 * unless the operator allows plain `http:` and non-public addresses
 * (SHOMEI_WEBHOOK_ALLOW_PRIVATE, the default in mock mode only), no
 * credentials or fragment, and not a loopback or private address literal or
 * `localhost`. A host name is checked again when each attempt connects
 * (it may resolve anywhere): see the sender.
 */
export function checkedEndpointUrl(text: string, allowPrivate: boolean): string {
  if (!text) throw invalidField("url", "url is required");
  if (text.length > maxUrlLength) throw invalidField("url", `url must be at most ${maxUrlLength} characters`);
  if (!URL.canParse(text)) throw invalidField("url", "url must be an absolute https:// URL");
  const url = new URL(text);
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    throw invalidField("url", allowPrivate ? "url must be an http:// or https:// URL" : "url must be an https:// URL");
  }
  if (url.username || url.password) throw invalidField("url", "url must not carry a user name or password");
  if (url.hash) throw invalidField("url", "url must not carry a fragment");
  if (!allowPrivate && isPrivateHost(url.hostname)) {
    throw invalidField("url", "url must not point at a loopback, private or link-local address");
  }
  return url.href;
}

function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  return isNonPublicAddress(host) === true;
}

import { DomainError } from "../../errors.ts";
import { checkedEndpointUrl } from "../../webhooks/endpoint-url.ts";
import type { OidcClient } from "../client.ts";

/**
 * A backchannel_logout_uri is called by this server, so beyond the rule of
 * a redirect URI (client metadata) it must be one the server may reach: in
 * production mode (SHOMEI_WEBHOOK_ALLOW_PRIVATE off) https:// and not a
 * loopback, private or link-local address, as a webhook endpoint. The
 * sender checks the address again at each attempt.
 */
export function checkBackchannelLogoutUri(client: OidcClient, allowPrivate: boolean): void {
  if (client.backchannelLogoutUri === undefined) return;
  try {
    checkedEndpointUrl(client.backchannelLogoutUri, allowPrivate);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    throw new DomainError("invalid_field", `backchannel_logout_uri: ${error.message.replace(/^url /, "")}`, "backchannel_logout_uri");
  }
}

import { DomainError } from "../errors.ts";
import { checkedEndpointUrl } from "../webhooks/endpoint-url.ts";
import type { OidcClient } from "./client.ts";

/**
 * The URIs of a registration that this server calls: backchannel_logout_uri
 * (logout tokens are POSTed to it) and jwks_uri (its keys are fetched from
 * it). Beyond the rule of client metadata each must be one the server may
 * reach: in production mode (SHOMEI_WEBHOOK_ALLOW_PRIVATE off) https:// and
 * not a loopback, private or link-local address, as a webhook endpoint.
 * The requests check the address again each time they connect.
 */
export function checkServerCalledUris(client: Pick<OidcClient, "backchannelLogoutUri" | "jwksUri">, allowPrivate: boolean): void {
  check("backchannel_logout_uri", client.backchannelLogoutUri, allowPrivate);
  check("jwks_uri", client.jwksUri, allowPrivate);
}

function check(field: string, uri: string | undefined, allowPrivate: boolean): void {
  if (uri === undefined) return;
  try {
    checkedEndpointUrl(uri, allowPrivate);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    throw new DomainError("invalid_field", `${field}: ${error.message.replace(/^url /, "")}`, field);
  }
}

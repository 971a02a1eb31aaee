import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  CreateOAuthClientResponseSchema,
  DeleteOAuthClientResponseSchema,
  ListOAuthClientsResponseSchema,
  OAuthClientSchema,
  type CreateOAuthClientRequest,
  type DeleteOAuthClientRequest,
  type OAuthClient,
  type OAuthClientService,
} from "../../../gen/service/verify/v2/oauth_client_service_pb.ts";
import type { ApiClientAuthMethod, ApiOAuthClients } from "../../domain/accounts/oauth-clients.ts";
import { DomainError } from "../../domain/errors.ts";
import { jsonNestingWithin, maxJsonDepth } from "../../domain/json-nesting.ts";
import type { OidcClient } from "../../domain/oidc/client.ts";
import { callerAccountId } from "../auth.ts";

const authMethods: readonly ApiClientAuthMethod[] = ["client_secret_basic", "client_secret_post", "private_key_jwt"];

/** OAuthClientService: the OAuth clients an account registers for its own back ends (API tokens only, see routes.ts). */
export class OAuthClientHandler implements ServiceImpl<typeof OAuthClientService> {
  constructor(private readonly clients: ApiOAuthClients) {}

  async createOAuthClient(req: CreateOAuthClientRequest, context: HandlerContext) {
    // Left out, as on the command line: private_key_jwt when keys are given, otherwise client_secret_basic.
    const method = req.tokenEndpointAuthMethod || (req.jwksJson !== "" ? "private_key_jwt" : "client_secret_basic");
    if (!(authMethods as readonly string[]).includes(method)) {
      throw new DomainError("invalid_field", `token_endpoint_auth_method must be ${authMethods.join(", ")}`, "token_endpoint_auth_method");
    }
    let jwks: unknown;
    if (req.jwksJson !== "") {
      // JSON inside a string field: the body's own nesting check never saw it (json-nesting.ts).
      if (!jsonNestingWithin(req.jwksJson)) {
        throw new DomainError("invalid_field", `jwks_json nests arrays and objects more than ${maxJsonDepth} levels deep`, "jwks_json");
      }
      try {
        jwks = JSON.parse(req.jwksJson);
      } catch {
        throw new DomainError("invalid_field", "jwks_json is not valid JSON", "jwks_json");
      }
    }
    const { client, secret } = await this.clients.add(callerAccountId(context), {
      name: req.name,
      authMethod: method as ApiClientAuthMethod,
      ...(jwks !== undefined ? { jwks } : {}),
      scopes: req.scopes,
      dpopBoundAccessTokens: req.dpopBoundAccessTokens,
    });
    return create(CreateOAuthClientResponseSchema, { oauthClient: message(client), clientSecret: secret ?? "" });
  }

  async listOAuthClients(_req: unknown, context: HandlerContext) {
    const clients = await this.clients.list(callerAccountId(context));
    return create(ListOAuthClientsResponseSchema, { oauthClients: clients.map(message) });
  }

  async deleteOAuthClient(req: DeleteOAuthClientRequest, context: HandlerContext) {
    await this.clients.remove(callerAccountId(context), req.clientId);
    return create(DeleteOAuthClientResponseSchema, {});
  }
}

function message(client: OidcClient): OAuthClient {
  return create(OAuthClientSchema, {
    clientId: client.clientId,
    name: client.name,
    tokenEndpointAuthMethod: client.tokenEndpointAuthMethod,
    scopes: client.allowedScopes,
    dpopBoundAccessTokens: client.dpopBoundAccessTokens,
    createTime: timestampFromMs(client.createdAt),
  });
}

import type { FuzzCase } from "./fuzz-case.ts";
import type { FuzzTarget } from "./fuzz-target.ts";
import { badPercentEncodings, mutatedQuery, type Parameters } from "./form-mutations.ts";
import { formBody, randomAccept, randomCookie } from "./http-noise.ts";
import { randomText } from "./random-messages.ts";
import type { HttpTransport } from "./raw-client.ts";
import type { SeededRandom } from "./seeded-random.ts";

/**
 * One request to an OpenID Connect endpoint (authorize GET and POST, PAR,
 * token, userinfo, revocation, introspection, grant management, discovery,
 * JWKS, end-session), starting from parameters that would be accepted and then
 * mutated (see form-mutations.ts), with valid, wrong or malformed client
 * credentials, bearer tokens and cookies.
 */
const api = "/api/oidc/v1";
const jwtAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

function randomJwt(random: SeededRandom, valid: string): string {
  return random.weighted<() => string>([
    [3, () => valid],
    [2, () => { const i = random.int(valid.length); return valid.slice(0, i) + (valid[i] === "A" ? "B" : "A") + valid.slice(i + 1); }],
    [2, () => [1, 2, 3].map(() => random.text(random.range(0, 60), jwtAlphabet)).join(".")],
    [1, () => `${Buffer.from(JSON.stringify({ alg: random.pick(["none", "ES256", "HS256", "RS256", 5]), kid: randomText(random, []) })).toString("base64url")}.${Buffer.from(random.pick(["{}", "[]", "null", '{"exp":"x","sub":5}', "x"])).toString("base64url")}.`],
    [1, () => random.pick(["", ".", "..", "a.b", "a.b.c.d.e", valid.split(".").slice(0, 2).join(".")])],
  ])();
}

/** The authorization request of the demo client, plausible enough to reach the later checks. */
function authorizationParameters(target: FuzzTarget, random: SeededRandom): Parameters {
  const params: Parameters = [
    ["client_id", target.clientId],
    ["redirect_uri", target.redirectUri],
    ["response_type", "code"],
    ["scope", random.pick(["openid", "openid profile", "openid email offline_access", "profile", "openid unknown_scope"])],
    ["state", randomText(random, [])],
  ];
  const optional: Parameters = [
    ["nonce", randomText(random, [])],
    ["code_challenge", random.text(43, jwtAlphabet)],
    ["code_challenge_method", random.pick(["S256", "plain", "x"])],
    ["prompt", random.pick(["none", "login", "consent", "select_account", "none login", ""])],
    ["max_age", random.pick(["0", "-1", "1e9", "99999999999999999999", "x", "3600"])],
    ["acr_values", random.pick(["low", "high", "very_high", "low high", "urn:x"])],
    ["login_hint", randomText(random, [])],
    ["response_mode", random.pick(["query", "fragment", "form_post", "x"])],
    ["request_uri", `urn:ietf:params:oauth:request_uri:${random.text(random.range(0, 60), jwtAlphabet)}`],
    ["request", randomJwt(random, target.idToken)],
    ["claims", random.pick(['{"userinfo":{"email":null}}', "{", "[]", "null"])],
    ["grant_id", random.pick([target.grantId, randomText(random, [])])],
    ["grant_management_action", random.pick(["create", "replace", "merge", "x", ""])],
    [
      "authorization_details",
      random.pick([
        '[{"type":"payment_initiation","instructedAmount":{"currency":"EUR","amount":"1.00"}}]',
        '[{"type":"account_information"}]',
        "[{}]",
        "{}",
        "[",
        "[null]",
        '[{"type":5}]',
        JSON.stringify([{ type: "payment_initiation", nested: JSON.parse("[".repeat(200) + "]".repeat(200)) as unknown }]),
        JSON.stringify(Array.from({ length: 200 }, () => ({ type: "account_information" }))),
      ]),
    ],
    ["ui_locales", random.pick(["ja", "en-US", "x".repeat(300)])],
  ];
  for (const entry of optional) if (random.chance(0.2)) params.push(entry);
  return params;
}

interface ClientAuth {
  name: string;
  headers: Record<string, string>;
  form: Parameters;
}

function clientAuthentication(target: FuzzTarget, random: SeededRandom): ClientAuth {
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
  return random.weighted<() => ClientAuth>([
    [5, () => ({ name: "client_secret_basic", headers: { authorization: basic(target.clientId, target.clientSecret) }, form: [] })],
    [2, () => ({ name: "wrong secret", headers: { authorization: basic(target.clientId, `${target.clientSecret}x`) }, form: [] })],
    [
      2,
      () => ({
        name: "malformed basic",
        headers: {
          authorization: random.pick([
            "Basic",
            "Basic ",
            "Basic !!!",
            `Basic ${Buffer.from("nocolon").toString("base64")}`,
            `Basic ${Buffer.from(`${random.pick(badPercentEncodings)}:${random.pick(badPercentEncodings)}`).toString("base64")}`,
            `Basic ${Buffer.from([0xff, 0x3a, 0xfe]).toString("base64")}`,
            `Basic ${"QUFB".repeat(3000)}`,
            "Bearer x",
            `basic ${Buffer.from(`${target.clientId}:`).toString("base64")}`,
          ]),
        },
        form: [],
      }),
    ],
    [2, () => ({ name: "client_secret_post", headers: {}, form: [["client_id", target.clientId], ["client_secret", random.chance(0.7) ? target.clientSecret : randomText(random, [])]] })],
    [
      1,
      () => ({
        name: "client assertion",
        headers: {},
        form: [
          ["client_id", target.clientId],
          ["client_assertion_type", random.pick(["urn:ietf:params:oauth:client-assertion-type:jwt-bearer", "x"])],
          ["client_assertion", randomJwt(random, target.idToken)],
        ],
      }),
    ],
    [1, () => ({ name: "two methods", headers: { authorization: basic(target.clientId, target.clientSecret) }, form: [["client_secret", target.clientSecret], ["client_id", target.clientId]] })],
    [1, () => ({ name: "public client", headers: {}, form: [["client_id", random.pick([target.clientId, randomText(random, [])])]] })],
    [1, () => ({ name: "no client", headers: {}, form: [] })],
  ])();
}

function bearer(target: FuzzTarget, random: SeededRandom): string | undefined {
  return random.pick([
    `Bearer ${target.accessToken}`,
    `Bearer ${target.accessToken}`,
    `Bearer ${randomJwt(random, target.accessToken)}`,
    `Bearer ${random.text(random.range(1, 100), jwtAlphabet)}`,
    undefined,
    "Bearer",
    "Bearer a b",
    `DPoP ${target.accessToken}`,
    `Bearer ${target.refreshToken}`,
    `Bearer ${"x".repeat(5000)}`,
  ]);
}

interface Endpoint {
  weight: number;
  make(target: FuzzTarget, random: SeededRandom): { method: string; route: string; path: string; headers: Record<string, string>; body?: Buffer; notes: string[] };
}

/** A POST of form parameters to a client-authenticated endpoint. */
function clientEndpoint(route: string, parameters: (target: FuzzTarget, random: SeededRandom) => Parameters): Endpoint["make"] {
  return (target, random) => {
    const auth = clientAuthentication(target, random);
    const form = formBody(mutatedQuery([...auth.form, ...parameters(target, random)], random, [target.clientId, target.redirectUri]), random);
    return { method: "POST", route: `POST ${route}`, path: route, headers: { ...auth.headers, ...form.headers }, body: form.body, notes: [auth.name, form.name] };
  };
}

const endpoints: Endpoint[] = [
  {
    weight: 4,
    make: (target, random) => {
      const query = mutatedQuery(authorizationParameters(target, random), random, [target.clientId, target.redirectUri]);
      return { method: "GET", route: "GET /api/oidc/v1/authorize", path: `${api}/authorize?${query}`, headers: {}, notes: [] };
    },
  },
  {
    weight: 2,
    make: (target, random) => {
      const form = formBody(mutatedQuery(authorizationParameters(target, random), random, [target.clientId]), random);
      return { method: "POST", route: "POST /api/oidc/v1/authorize", path: `${api}/authorize`, headers: form.headers, body: form.body, notes: [form.name] };
    },
  },
  { weight: 3, make: clientEndpoint(`${api}/par`, authorizationParameters) },
  {
    weight: 3,
    make: clientEndpoint(`${api}/token`, (target, random) =>
      random.chance(0.5)
        ? [["grant_type", random.pick(["authorization_code", "authorization_code", "password", "client_credentials", ""])], ["code", random.text(43, jwtAlphabet)], ["redirect_uri", target.redirectUri], ["code_verifier", random.text(random.pick([43, 10, 200]), jwtAlphabet)]]
        : [["grant_type", "refresh_token"], ["refresh_token", random.pick([target.spareRefreshToken, randomJwt(random, target.spareRefreshToken), ""])], ["scope", random.pick(["openid", "openid profile email", "offline_access", "x"])]],
    ),
  },
  { weight: 2, make: clientEndpoint(`${api}/revoke`, (target, random) => [["token", random.pick([target.spareAccessToken, target.spareRefreshToken, randomJwt(random, target.idToken), ""])], ["token_type_hint", random.pick(["access_token", "refresh_token", "x"])]]) },
  { weight: 2, make: clientEndpoint(`${api}/introspect`, (target, random) => [["token", random.pick([target.accessToken, target.refreshToken, randomJwt(random, target.accessToken)])], ["token_type_hint", random.pick(["access_token", "refresh_token", "x"])]]) },
  {
    weight: 2,
    make: (target, random) => {
      const method = random.pick(["GET", "POST", "POST"]);
      const auth = bearer(target, random);
      const headers: Record<string, string> = auth === undefined ? {} : { authorization: auth };
      const form = method === "POST" ? formBody(mutatedQuery([["access_token", target.accessToken]], random, []), random) : undefined;
      return { method, route: `${method} /api/oidc/v1/userinfo`, path: `${api}/userinfo${random.chance(0.2) ? `?${mutatedQuery([["schema", "openid"]], random, [])}` : ""}`, headers: { ...headers, ...form?.headers }, ...(form ? { body: form.body } : {}), notes: [auth?.slice(0, 12) ?? "no authorization"] };
    },
  },
  {
    weight: 2,
    make: (target, random) => {
      const method = random.pick(["GET", "DELETE"]);
      const auth = bearer(target, random);
      // A DELETE of the real grant would revoke the tokens other cases use: it gets an altered id.
      const id = random.weighted<() => string>([
        [3, () => (method === "GET" ? target.grantId : `${target.grantId}x`)],
        [2, () => encodeURIComponent(randomText(random, []))],
        [1, () => random.pick(badPercentEncodings)],
        [1, () => "x".repeat(random.pick([300, 5000]))],
        [1, () => random.pick(["..", "%2e%2e", "a%2Fb", ""])],
      ])();
      return { method, route: `${method} /api/oidc/v1/grants/:grantId`, path: `${api}/grants/${id}`, headers: auth === undefined ? ({} as Record<string, string>) : { authorization: auth }, notes: [auth?.slice(0, 12) ?? "no authorization"] };
    },
  },
  {
    weight: 2,
    make: (target, random) => {
      const path = random.pick(["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server", `${api}/jwks`]);
      const method = random.weighted([[6, "GET"], [1, "HEAD"], [1, "POST"], [1, "OPTIONS"], [1, "PUT"]] as const);
      const query = random.chance(0.3) ? `?${mutatedQuery([["x", "1"]], random, [])}` : "";
      const headers: Record<string, string> = {};
      if (random.chance(0.3)) headers.origin = random.pick(["https://example.com", "null", "x", "http://127.0.0.1"]);
      if (random.chance(0.2)) headers["if-none-match"] = random.pick(['"x"', "*", "W/\"1\""]);
      if (method === "OPTIONS") headers["access-control-request-method"] = random.pick(["GET", "POST", "DELETE", "x"]);
      return { method, route: `${method} ${path}`, path: `${path}${query}`, headers, ...(method === "POST" || method === "PUT" ? { body: random.bytes(random.range(0, 100)) } : {}), notes: [] };
    },
  },
  {
    weight: 3,
    make: (target, random) => {
      const params: Parameters = [];
      if (random.chance(0.7)) params.push(["id_token_hint", randomJwt(random, target.idToken)]);
      if (random.chance(0.6)) params.push(["client_id", random.pick([target.clientId, randomText(random, [])])]);
      if (random.chance(0.6)) params.push(["post_logout_redirect_uri", random.pick([target.postLogoutRedirectUri, target.redirectUri, "https://evil.example/", "javascript:alert(1)", randomText(random, [])])]);
      if (random.chance(0.5)) params.push(["state", randomText(random, [])]);
      if (random.chance(0.3)) params.push(["confirm", random.pick(["yes", "no", ""])]);
      if (random.chance(0.2)) params.push(["logout_hint", randomText(random, [])]);
      const query = mutatedQuery(params, random, [target.clientId]);
      if (random.chance(0.5)) return { method: "GET", route: "GET /auth/logout", path: `/auth/logout?${query}`, headers: {}, notes: ["end-session"] };
      const form = formBody(query, random);
      return { method: "POST", route: "POST /auth/logout", path: "/auth/logout", headers: form.headers, body: form.body, notes: ["end-session", form.name] };
    },
  },
];

export function oidcCase(target: FuzzTarget, random: SeededRandom, transport: HttpTransport): FuzzCase {
  const endpoint = random.weighted(endpoints.map((e) => [e.weight, e] as const));
  const made = endpoint.make(target, random);
  // Only end-session requests get the browser whose session they may end.
  const cookies = made.route.endsWith("/auth/logout") ? [target.leavingCookie] : [target.signedInCookie, ...target.interactions.map((i) => i.cookie)];
  const cookie = randomCookie(random, cookies);
  const accept = randomAccept(random);
  const headers: Record<string, string> = { ...made.headers };
  if (cookie.header !== undefined) headers.cookie = cookie.header;
  if (accept !== undefined) headers.accept = accept;
  return {
    transport,
    method: made.method,
    path: made.path,
    headers,
    ...(made.body ? { body: made.body } : {}),
    protocol: "http",
    route: made.route,
    description: [transport, ...made.notes, cookie.name].join(", "),
  };
}

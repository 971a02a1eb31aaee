import type { FuzzCase } from "./fuzz-case.ts";
import type { FuzzTarget, OpenInteraction } from "./fuzz-target.ts";
import { badPercentEncodings, mutatedQuery, type Parameters } from "./form-mutations.ts";
import { formBody, randomAccept, randomCookie } from "./http-noise.ts";
import { randomText } from "./random-messages.ts";
import type { HttpTransport } from "./raw-client.ts";
import type { SeededRandom } from "./seeded-random.ts";

/**
 * One request to an interaction page (/auth/login, /auth/reauth,
 * /auth/consent, /auth/unreachable), GET or form POST, usually aimed at an interaction that is
 * really open in the browser whose cookie it sends and carrying that page's
 * CSRF token, so the mutated fields reach the page's own checks; sometimes with
 * another browser's cookie, an unknown or malformed interaction id, or a wrong
 * or repeated CSRF token.
 */
const otpDigits = "0123456789";

type Page = OpenInteraction["page"] | "unreachable";

function fields(page: Page, random: SeededRandom): Parameters {
  switch (page) {
    case "login":
      // A wrong password mostly; the throttle answers 429 once it has seen enough, which is a fine answer too.
      return [["login", random.pick(["demo", "demo", "nobody", "", " demo ", "DEMO"])], ["password", random.pick(["wrong", "", "x".repeat(2000), "demo-password"])]];
    case "reauth":
      return [["password", random.pick(["wrong", "", "demo-password"])], ["otp", random.pick([random.text(6, otpDigits), random.text(random.range(0, 12), otpDigits), "abcdef", ""])]];
    case "consent":
      return [["decision", random.pick(["allow", "deny", "", "maybe"])]];
    case "unreachable":
      return [["return", random.pick(["yes", "", "no"])]];
  }
}

function interactionParameter(interaction: OpenInteraction, random: SeededRandom): string {
  return random.weighted<() => string>([
    [6, () => `interaction=${interaction.id}`],
    [1, () => `interaction=${interaction.id}${random.pick(badPercentEncodings)}`],
    [1, () => `interaction=${encodeURIComponent(randomText(random, []))}`],
    [1, () => `interaction=${interaction.id}&interaction=${interaction.id}`],
    [1, () => random.pick(["", "interaction", "interaction=", "interaction[]=x", `interaction=${"A".repeat(5000)}`])],
  ])();
}

export function pageCase(target: FuzzTarget, random: SeededRandom, transport: HttpTransport): FuzzCase {
  const interaction = random.pick(target.interactions);
  // Mostly the page the interaction is at; sometimes another page with its id.
  const page: Page = random.chance(0.8) ? interaction.page : random.pick(["login", "reauth", "consent", "unreachable"] as const);
  const path = `/auth/${page}?${interactionParameter(interaction, random)}`;
  const cookie = random.chance(0.7) ? { name: "its browser", header: interaction.cookie } : randomCookie(random, [target.signedInCookie, ...target.interactions.map((i) => i.cookie)]);
  const headers: Record<string, string> = {};
  if (cookie.header !== undefined) headers.cookie = cookie.header;
  const accept = randomAccept(random);
  if (accept !== undefined) headers.accept = accept;
  const notes = [transport, page === interaction.page ? `${page} page` : `${page} page, ${interaction.page} interaction`, cookie.name];
  if (random.chance(0.25)) {
    return { transport, method: "GET", path, headers, protocol: "http", route: `GET /auth/${page}`, description: notes.join(", ") };
  }
  const csrf = random.weighted<() => Parameters>([
    [6, () => [["csrf", interaction.csrf]]],
    [1, () => []],
    [1, () => [["csrf", random.text(43, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")]]],
    [1, () => [["csrf", interaction.csrf], ["csrf", interaction.csrf]]],
    [1, () => [["csrf", random.pick(target.interactions).csrf]]],
  ])();
  const form = formBody(mutatedQuery([...csrf, ...fields(page, random)], random, [], random.range(0, 2)), random);
  notes.push(form.name);
  return {
    transport,
    method: "POST",
    path,
    headers: { ...headers, ...form.headers },
    body: form.body,
    protocol: "http",
    route: `POST /auth/${page}`,
    description: notes.join(", "),
  };
}

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { totpPeriodSeconds } from "../../src/domain/credentials/totp.ts";
import { OidcUsers } from "../../src/domain/oidc/users.ts";
import { inMemoryOidcStores, ManualClock } from "../support/in-memory/index.ts";

/**
 * The mock environment's hint on the step-up page shows a code the page will
 * take: after a step-up has used this time step's code, the next step's
 * (which the verification's window accepts), not the used one again.
 */
describe("the one-time code the mock hint shows", () => {
  async function enrolled() {
    const clock = new ManualClock();
    const users = new OidcUsers(inMemoryOidcStores().oidc, randomBytes(32), clock.clock);
    const row = await users.create({ login: "hinted", password: "hinted-password", name: "Hinted" });
    await users.enrolTotp(row.id);
    return { users, clock, fresh: async () => (await users.find(row.id))! };
  }

  it("is accepted once; after that, within the same 30 s, the next code shown is accepted too", async () => {
    const { users, fresh } = await enrolled();
    const first = users.currentOtp(await fresh())!;
    expect(await users.verifyOtp(await fresh(), first)).toBe(true);
    // The same code again is refused (used); the hint now shows another, which is taken.
    expect(await users.verifyOtp(await fresh(), first)).toBe(false);
    const next = users.currentOtp(await fresh())!;
    expect(next).not.toBe(first);
    expect(await users.verifyOtp(await fresh(), next)).toBe(true);
  });

  it("in a later time step shows that step's code again", async () => {
    const { users, clock, fresh } = await enrolled();
    expect(await users.verifyOtp(await fresh(), users.currentOtp(await fresh())!)).toBe(true);
    clock.advance(2 * totpPeriodSeconds * 1000);
    const later = users.currentOtp(await fresh())!;
    expect(await users.verifyOtp(await fresh(), later)).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import { isDueForRenewal, renewalOpensAt } from "../../src/domain/oidc/jpki/renewal.ts";

describe("a JPKI certificate's renewal window", () => {
  const notAfter = Date.UTC(2031, 4, 20, 15, 0, 0);

  it("opens three calendar months before the certificate ends", () => {
    expect(new Date(renewalOpensAt(notAfter)).toISOString()).toBe("2031-02-20T15:00:00.000Z");
  });

  it.each([
    ["a day before the window", Date.UTC(2031, 1, 19, 15, 0, 0), false],
    ["the window's first moment", Date.UTC(2031, 1, 20, 15, 0, 0), true],
    ["the last day", Date.UTC(2031, 4, 20, 14, 59, 59), true],
    ["once it ended (expired, not due)", notAfter, false],
  ])("%s", (_name, now, due) => {
    expect(isDueForRenewal(notAfter, now)).toBe(due);
  });
});

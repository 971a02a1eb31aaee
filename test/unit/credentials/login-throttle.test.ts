import { describe, expect, it } from "vitest";
import { addressKey } from "../../../src/domain/credentials/client-address.ts";
import { LoginThrottle } from "../../../src/domain/credentials/login-throttle.ts";

const minute = 60_000;

function setup(options?: ConstructorParameters<typeof LoginThrottle>[1]) {
  const time = { now: 1_700_000_000_000 };
  const start = time.now;
  const throttle = new LoginThrottle(() => time.now, options);
  const at = (ms: number) => {
    time.now = start + ms;
  };
  return { throttle, at };
}

describe("login throttle, per account", () => {
  it("allows the 5th failure and blocks the 6th attempt until the oldest failure is 15 minutes old", () => {
    const { throttle, at } = setup();
    for (let i = 0; i < 5; i++) {
      at(i * minute);
      expect(throttle.check("alice", `192.0.2.${i}`)).toEqual({ allowed: true });
      throttle.recordFailure("alice", `192.0.2.${i}`);
    }
    at(5 * minute);
    expect(throttle.check("alice", "198.51.100.7")).toEqual({ allowed: false, retryAfterSeconds: 600, scope: "account" });
    at(15 * minute - 1);
    expect(throttle.check("alice", "198.51.100.7")).toEqual({ allowed: false, retryAfterSeconds: 1, scope: "account" });
    // The window slides: the first failure expires, one more attempt is allowed.
    at(15 * minute);
    expect(throttle.check("alice", "198.51.100.7")).toEqual({ allowed: true });
    throttle.recordFailure("alice", "198.51.100.7");
    expect(throttle.check("alice", "198.51.100.7")).toEqual({ allowed: false, retryAfterSeconds: 60, scope: "account" });
    at(19 * minute);
    expect(throttle.check("alice", "198.51.100.7")).toEqual({ allowed: true });
  });

  it("counts accounts separately, and case variants of one account together", () => {
    const { throttle } = setup();
    for (let i = 0; i < 5; i++) throttle.recordFailure(i % 2 ? "Alice" : "ALICE", "192.0.2.1");
    expect(throttle.check("alice", "192.0.2.2")).toMatchObject({ allowed: false, scope: "account", retryAfterSeconds: 900 });
    expect(throttle.check("bob", "192.0.2.1")).toEqual({ allowed: true });
  });

  it("clears the account on success, but not the address", () => {
    const { throttle } = setup({ maxFailuresPerAddress: 6 });
    for (let i = 0; i < 5; i++) throttle.recordFailure("alice", "192.0.2.1");
    expect(throttle.check("alice", "192.0.2.1").allowed).toBe(false);
    throttle.recordSuccess("Alice");
    expect(throttle.check("alice", "192.0.2.1")).toEqual({ allowed: true });
    throttle.recordFailure("alice", "192.0.2.1");
    expect(throttle.check("alice", "192.0.2.1")).toEqual({ allowed: false, retryAfterSeconds: 900, scope: "address" });
  });
});

describe("login throttle, per address", () => {
  it("blocks an address after 20 failures, whatever the accounts, independently of them", () => {
    const { throttle, at } = setup();
    for (let i = 0; i < 20; i++) {
      at(i * 1000);
      expect(throttle.check(`user${i}`, "203.0.113.9")).toEqual({ allowed: true });
      throttle.recordFailure(`user${i}`, "203.0.113.9");
    }
    at(20_000);
    expect(throttle.check("someone-new", "203.0.113.9")).toEqual({ allowed: false, retryAfterSeconds: 880, scope: "address" });
    expect(throttle.check("someone-new", "203.0.113.10")).toEqual({ allowed: true });
    expect(throttle.check("user3", "203.0.113.10")).toEqual({ allowed: true });
    at(15 * minute);
    expect(throttle.check("someone-new", "203.0.113.9")).toEqual({ allowed: true });
  });

  it("counts an IPv6 /64 as one address and an IPv4-mapped address as its IPv4 address", () => {
    const { throttle } = setup({ maxFailuresPerAddress: 3 });
    for (let i = 1; i <= 3; i++) throttle.recordFailure(`u${i}`, `2001:db8:0:1::${i}`);
    expect(throttle.check("x", "2001:db8:0:1:ffff:ffff:ffff:ffff")).toMatchObject({ allowed: false, scope: "address" });
    expect(throttle.check("x", "2001:db8:0:2::1")).toEqual({ allowed: true });

    for (let i = 1; i <= 3; i++) throttle.recordFailure(`v${i}`, i % 2 ? "::ffff:192.0.2.1" : "192.0.2.1");
    expect(throttle.check("x", "192.0.2.1")).toMatchObject({ allowed: false, scope: "address" });
  });

  it("reports the longer wait when both scopes are blocked", () => {
    const limits = { maxFailuresPerAccount: 2, maxFailuresPerAddress: 2 };
    const first = setup(limits);
    first.throttle.recordFailure("other", "192.0.2.1");
    first.at(minute);
    first.throttle.recordFailure("alice", "192.0.2.1");
    first.at(2 * minute);
    first.throttle.recordFailure("alice", "198.51.100.1");
    expect(first.throttle.check("alice", "192.0.2.1")).toEqual({ allowed: false, retryAfterSeconds: 840, scope: "account" });

    const second = setup(limits);
    second.throttle.recordFailure("alice", "198.51.100.1");
    second.at(minute);
    second.throttle.recordFailure("alice", "198.51.100.2");
    second.throttle.recordFailure("x", "192.0.2.1");
    second.at(2 * minute);
    second.throttle.recordFailure("y", "192.0.2.1");
    expect(second.throttle.check("alice", "192.0.2.1")).toEqual({ allowed: false, retryAfterSeconds: 840, scope: "address" });
  });
});

describe("login throttle memory", () => {
  it("forgets the keys whose last failure is oldest beyond maxTrackedKeys", () => {
    const { throttle } = setup({ maxFailuresPerAccount: 1, maxTrackedKeys: 2 });
    throttle.recordFailure("a", "192.0.2.1");
    throttle.recordFailure("b", "192.0.2.2");
    throttle.recordFailure("a", "192.0.2.1"); // a is now the most recent
    throttle.recordFailure("c", "192.0.2.3");
    expect(throttle.trackedKeys()).toEqual({ account: 2, address: 2 });
    expect(throttle.check("b", "198.51.100.1")).toEqual({ allowed: true });
    expect(throttle.check("a", "198.51.100.1").allowed).toBe(false);
    expect(throttle.check("c", "198.51.100.1").allowed).toBe(false);
  });

  it("drops expired keys when it sweeps", () => {
    const { throttle, at } = setup();
    for (let i = 0; i < 999; i++) throttle.recordFailure(`user${i}`, `10.0.${i >> 8}.${i & 255}`);
    expect(throttle.trackedKeys()).toEqual({ account: 999, address: 999 });
    at(15 * minute);
    throttle.recordFailure("late", "192.0.2.1");
    expect(throttle.trackedKeys()).toEqual({ account: 1, address: 1 });
  });

  it("drops a key once its failures expire", () => {
    const { throttle, at } = setup();
    throttle.recordFailure("alice", "192.0.2.1");
    expect(throttle.trackedKeys()).toEqual({ account: 1, address: 1 });
    at(15 * minute);
    expect(throttle.check("alice", "192.0.2.1")).toEqual({ allowed: true });
    expect(throttle.trackedKeys()).toEqual({ account: 0, address: 0 });
  });

  it("rejects nonsensical limits", () => {
    expect(() => new LoginThrottle(() => 0, { maxFailuresPerAccount: 0 })).toThrow(RangeError);
    expect(() => new LoginThrottle(() => 0, { windowMs: 1.5 })).toThrow(RangeError);
  });
});

describe("addressKey", () => {
  it.each([
    ["192.0.2.1", "192.0.2.1"],
    ["::ffff:192.0.2.1", "192.0.2.1"],
    ["::ffff:c000:201", "192.0.2.1"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["2001:DB8:0:0:1:2:3:4", "2001:db8:0:0::/64"],
    ["2001:db8:aa:bb::", "2001:db8:aa:bb::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["::", "0:0:0:0::/64"],
    ["64:ff9b::192.0.2.1", "64:ff9b:0:0::/64"],
    ["unknown", "unknown"],
  ])("%s counts as %s", (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});

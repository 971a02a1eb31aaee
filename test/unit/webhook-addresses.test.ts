import { describe, expect, it } from "vitest";
import { checkedEndpointUrl } from "../../src/domain/webhooks/endpoint-url.ts";
import { isNonPublicAddress } from "../../src/domain/webhooks/private-address.ts";
import { nextAttemptAt } from "../../src/domain/webhooks/retry-schedule.ts";
import { DomainError } from "../../src/domain/errors.ts";

/** The address rules that keep a webhook out of the service's own network, and the retry schedule's arithmetic. */
describe("non-public addresses", () => {
  it.each([
    "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "::1", "[::1]", "fe80::1", "fd00::1", "fc12:3456::1", "ff02::1",
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:7f00:1", "64:ff9b::a9fe:a9fe", "::127.0.0.1", "fe80::1%eth0",
  ])("%s is not public", (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each(["8.8.8.8", "172.32.0.1", "100.128.0.1", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"])("%s is public", (address) => {
    expect(isNonPublicAddress(address)).toBe(false);
  });

  it.each(["example.com", "1.2.3", "1.2.3.256", "01.2.3.4", ":::1", "1::2::3", "g::1", ""])("%s is not an address", (text) => {
    expect(isNonPublicAddress(text)).toBeUndefined();
  });
});

describe("endpoint URLs", () => {
  const refused = (url: string, allowPrivate: boolean) => {
    try {
      checkedEndpointUrl(url, allowPrivate);
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).field).toBe("url");
      return (error as DomainError).message;
    }
    throw new Error(`${url} was accepted`);
  };

  it("without private addresses: https only, never loopback, private, link-local or localhost", () => {
    expect(checkedEndpointUrl("https://hooks.example.com/shomei?x=1", false)).toBe("https://hooks.example.com/shomei?x=1");
    expect(refused("http://hooks.example.com/", false)).toBe("url must be an https:// URL");
    for (const url of ["https://127.0.0.1/", "https://[::1]/", "https://localhost:8443/", "https://LOCALHOST./", "https://a.localhost/", "https://10.0.0.5/", "https://169.254.169.254/latest", "https://[::ffff:192.168.0.1]/", "https://0x7f000001/", "https://2130706433/"]) {
      expect(refused(url, false)).toBe("url must not point at a loopback, private or link-local address");
    }
  });

  it("with private addresses (mock mode): http and loopback too, still no credentials, fragments or other schemes", () => {
    expect(checkedEndpointUrl("http://127.0.0.1:8080/demo/webhooks", true)).toBe("http://127.0.0.1:8080/demo/webhooks");
    expect(refused("ftp://127.0.0.1/", true)).toBe("url must be an http:// or https:// URL");
    expect(refused("https://u:p@example.com/", true)).toBe("url must not carry a user name or password");
    expect(refused("https://example.com/#x", true)).toBe("url must not carry a fragment");
  });
});

describe("retry schedule", () => {
  const schedule = [0, 5000, 300_000];
  it("gives each delay with at most 10 % jitter either way, then nothing", () => {
    expect(nextAttemptAt(schedule, 1, 1000, 0)).toBe(1000 + 4500);
    expect(nextAttemptAt(schedule, 1, 1000, 0.999999)).toBe(1000 + 5500);
    expect(nextAttemptAt(schedule, 2, 0, 0.5)).toBe(300_000);
    expect(nextAttemptAt(schedule, 3, 0, 0.5)).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { addressKey } from "../../../src/domain/credentials/client-address.ts";

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

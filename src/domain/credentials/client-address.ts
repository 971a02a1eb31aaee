import { isIPv4, isIPv6 } from "node:net";

/**
 * The key under which failures from a client address are counted. One IPv6
 * subscriber usually holds a whole /64, so IPv6 addresses count per /64
 * (`2001:db8:0:1::/64`); an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, as
 * a dual-stack socket reports IPv4 peers) counts as its IPv4 address. Anything
 * that is not an IP address is used as given.
 */
export function addressKey(address: string): string {
  const bare = address.replace(/%.*$/, "");
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return address;
  const groups = expandIPv6(bare);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high, low] = [groups[6]!, groups[7]!];
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(":")}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (one isIPv6 accepts). */
function expandIPv6(address: string): number[] {
  const toGroups = (text: string): number[] => {
    if (text === "") return [];
    return text.split(":").flatMap((piece) => {
      if (!piece.includes(".")) return [parseInt(piece, 16)];
      const [a, b, c, d] = piece.split(".").map(Number) as [number, number, number, number];
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const [head, tail] = address.split("::") as [string, string | undefined];
  if (tail === undefined) return toGroups(head);
  const front = toGroups(head);
  const back = toGroups(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

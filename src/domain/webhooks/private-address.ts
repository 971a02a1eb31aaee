/**
 * Whether an IP address is one a webhook must not reach unless the operator
 * allows it: loopback, private (RFC 1918, unique local), link-local, shared
 * (CGNAT), unspecified, multicast, reserved and benchmarking ranges, and
 * IPv4 ones hidden in IPv6 (mapped, NAT64). A webhook aimed there could
 * reach the service's own network (SSRF). Not an address: undefined.
 */
export function isNonPublicAddress(address: string): boolean | undefined {
  const v4 = parseIpv4(address);
  if (v4) return nonPublicV4(v4);
  const v6 = parseIpv6(address.replace(/^\[|\]$/g, "").replace(/%.*$/, ""));
  if (!v6) return undefined;
  const embedded = embeddedIpv4(v6);
  if (embedded) return nonPublicV4(embedded);
  const [a] = v6;
  if (v6.every((part) => part === 0)) return true; // ::
  if (v6.slice(0, 7).every((part) => part === 0) && v6[7] === 1) return true; // ::1
  if ((a! & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local
  if ((a! & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((a! & 0xffc0) === 0xfec0) return true; // fec0::/10 site-local (deprecated)
  if ((a! & 0xff00) === 0xff00) return true; // multicast
  if (a === 0x2001 && v6[1] === 0x0db8) return true; // documentation
  return false;
}

function nonPublicV4([a, b, c]: number[]): boolean {
  return (
    a === 0 || a === 10 || a === 127 ||
    (a === 100 && b! >= 64 && b! <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b! >= 16 && b! <= 31) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) ||
    a! >= 224
  );
}

function parseIpv4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.map(Number);
}

/** Eight 16-bit groups, or undefined. */
function parseIpv6(text: string): number[] | undefined {
  if (!text.includes(":")) return undefined;
  let tail: number[] = [];
  let body = text;
  const lastColon = text.lastIndexOf(":");
  if (text.slice(lastColon + 1).includes(".")) {
    const v4 = parseIpv4(text.slice(lastColon + 1));
    if (!v4) return undefined;
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
    body = text.slice(0, lastColon + 1) + "0";
  }
  const halves = body.split("::");
  if (halves.length > 2) return undefined;
  const groups = (half: string) => (half === "" ? [] : half.split(":"));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  const parsed = (list: string[]) => list.map((g) => parseInt(g, 16));
  let all: number[];
  if (halves.length === 2) {
    const missing = 8 - head.length - rest.length - (tail.length ? 1 : 0);
    if (missing < 1) return undefined;
    all = [...parsed(head), ...new Array<number>(missing).fill(0), ...parsed(rest)];
  } else {
    all = parsed(head);
  }
  if (tail.length) all = [...all.slice(0, -1), ...tail];
  return all.length === 8 ? all : undefined;
}

/** The IPv4 address inside ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible) or 64:ff9b::a.b.c.d (NAT64). */
function embeddedIpv4(v6: number[]): number[] | undefined {
  const zeros = (from: number, to: number) => v6.slice(from, to).every((g) => g === 0);
  const mapped = zeros(0, 5) && v6[5] === 0xffff;
  const compatible = zeros(0, 6) && (v6[6] !== 0 || v6[7]! > 1);
  const nat64 = v6[0] === 0x64 && v6[1] === 0xff9b && zeros(2, 6);
  if (!mapped && !compatible && !nat64) return undefined;
  return [v6[6]! >> 8, v6[6]! & 0xff, v6[7]! >> 8, v6[7]! & 0xff];
}

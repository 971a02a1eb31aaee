/** RFC 5280 §4.1.2.2: serial numbers are positive and at most 20 octets long. */
const maxSerialOctets = 20;

/**
 * The canonical text form of a serial number in this service: lowercase hex of
 * the positive integer, an even number of digits, no leading zero octets (the
 * form `openssl x509 -serial` prints, in lowercase). Returns undefined when the
 * input is not a positive serial number of at most 20 octets.
 */
export function normalizeSerialNumberHex(input: string): string | undefined {
  if (!/^[0-9a-fA-F]+$/.test(input)) return undefined;
  const digits = input.toLowerCase().replace(/^0+/, "");
  if (digits.length === 0) return undefined;
  const even = digits.length % 2 === 0 ? digits : `0${digits}`;
  // DER adds a 00 octet in front of a value whose top bit is set; that octet counts.
  const octets = even.length / 2 + (Number.parseInt(even.slice(0, 2), 16) >= 0x80 ? 1 : 0);
  return octets <= maxSerialOctets ? even : undefined;
}

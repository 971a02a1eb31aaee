import { randomBytes } from "node:crypto";
import { normalizeSerialNumberHex } from "../certificates/x509/serial-number.ts";

const randomSerialOctets = 16;

/**
 * A fresh random serial number: 127 random bits (16 octets with the top bit
 * cleared, so the DER INTEGER stays 16 octets and positive), in canonical form.
 */
export function randomSerialNumberHex(): string {
  for (;;) {
    const octets = randomBytes(randomSerialOctets);
    octets[0] = (octets[0] ?? 0) & 0x7f;
    const serial = normalizeSerialNumberHex(octets.toString("hex"));
    if (serial) return serial;
  }
}

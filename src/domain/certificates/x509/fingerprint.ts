import { createHash } from "node:crypto";

/** SHA-256 over the DER encoding, lowercase hex without separators (64 characters). */
export function sha256FingerprintHex(der: ArrayBuffer | Uint8Array): string {
  return createHash("sha256").update(der instanceof Uint8Array ? der : new Uint8Array(der)).digest("hex");
}

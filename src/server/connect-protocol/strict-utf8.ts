import { configureTextEncoding, getTextEncoding } from "@bufbuild/protobuf/wire";

/**
 * Makes protobuf-es refuse a binary message whose string field is not valid
 * UTF-8, as protobuf's own decoders do for proto3 strings, instead of storing
 * U+FFFD in place of the bytes: a name or a state sent as junk must be
 * refused, not kept changed. protobuf-es decodes strings with one
 * process-wide TextDecoder that replaces bad bytes; this swaps in one that
 * throws, which the protocol layer answers as a message that does not decode
 * (client-faults.ts). Encoding is unchanged. Idempotent.
 */
export function refuseInvalidUtf8InBinaryMessages(): void {
  const current = getTextEncoding();
  if (current.decodeUtf8 === strictDecode) return;
  configureTextEncoding({ encodeUtf8: current.encodeUtf8, checkUtf8: current.checkUtf8, decodeUtf8: strictDecode });
}

const strict = new TextDecoder("utf-8", { fatal: true });

function strictDecode(bytes: Uint8Array): string {
  return strict.decode(bytes);
}

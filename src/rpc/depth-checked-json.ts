import { Code, ConnectError } from "@connectrpc/connect";
import { jsonNestingWithin, maxJsonDepth } from "../domain/json-nesting.ts";

/** What a JSON request nested deeper than the limit is answered with, on every path and protocol. */
export function tooDeeplyNested(): ConnectError {
  return new ConnectError(`the JSON request nests arrays and objects more than ${maxJsonDepth} levels deep`, Code.InvalidArgument);
}

/** What a JSON request whose bytes are not UTF-8 is answered with: refused, not read with U+FFFD in their place. */
function notUtf8(): ConnectError {
  return new ConnectError("the JSON request is not valid UTF-8", Code.InvalidArgument);
}

/**
 * A TextDecoder for Connect's JSON serialisation (its `jsonOptions.textDecoder`,
 * used on every JSON request body of every protocol, after decompression and
 * before JSON.parse): it refuses a body nested deeper than the limit before
 * the parser spends the event loop on it, and one that is not UTF-8 (RFC 8259
 * section 8.1), which a lenient decoder would turn into U+FFFD and store.
 */
export const depthCheckedDecoder = {
  decode(input: Uint8Array): string {
    if (!jsonNestingWithin(input)) throw tooDeeplyNested();
    try {
      return utf8.decode(input);
    } catch {
      throw notUtf8();
    }
  },
};

const utf8 = new TextDecoder("utf-8", { fatal: true });

import { Code, ConnectError } from "@connectrpc/connect";
import { jsonNestingWithin, maxJsonDepth } from "../domain/json-nesting.ts";

/** What a JSON request nested deeper than the limit is answered with, on every path and protocol. */
export function tooDeeplyNested(): ConnectError {
  return new ConnectError(`the JSON request nests arrays and objects more than ${maxJsonDepth} levels deep`, Code.InvalidArgument);
}

/**
 * A TextDecoder for Connect's JSON serialisation (its `jsonOptions.textDecoder`,
 * used on every JSON request body of every protocol, after decompression and
 * before JSON.parse): it refuses a body nested deeper than the limit before
 * the parser spends the event loop on it.
 */
export const depthCheckedDecoder = {
  decode(input: Uint8Array): string {
    if (!jsonNestingWithin(input)) throw tooDeeplyNested();
    return utf8.decode(input);
  },
};

const utf8 = new TextDecoder();

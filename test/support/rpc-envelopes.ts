/**
 * The length-prefixed messages of gRPC and gRPC-Web (and Connect streaming):
 * one flag byte (bit 0: compressed; bit 7: trailers, gRPC-Web only), a
 * four-byte big-endian length, then the payload.
 */
export function envelope(payload: Uint8Array, flags = 0, declaredLength = payload.length): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(declaredLength >>> 0, 1);
  return Buffer.concat([head, payload]);
}

/** Splits a body into its envelopes; what does not form a whole envelope is returned as `rest`. */
export function splitEnvelopes(body: Buffer): { envelopes: { flags: number; payload: Buffer }[]; rest: Buffer } {
  const envelopes: { flags: number; payload: Buffer }[] = [];
  let offset = 0;
  while (offset + 5 <= body.length) {
    const length = body.readUInt32BE(offset + 1);
    if (offset + 5 + length > body.length) break;
    envelopes.push({ flags: body[offset]!, payload: body.subarray(offset + 5, offset + 5 + length) });
    offset += 5 + length;
  }
  return { envelopes, rest: body.subarray(offset) };
}

/** The trailers a gRPC-Web response carries in its body (the envelope with flag 0x80), lower-cased names. */
export function grpcWebTrailers(body: Buffer): Record<string, string> {
  const trailers: Record<string, string> = {};
  for (const { flags, payload } of splitEnvelopes(body).envelopes) {
    if ((flags & 0x80) === 0) continue;
    for (const line of payload.toString("latin1").split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) trailers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
  }
  return trailers;
}

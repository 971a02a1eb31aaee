/** True when two byte strings (views or whole buffers) hold the same bytes. Not for secrets: it is not constant-time. */
export function sameBytes(a: ArrayBuffer | Uint8Array, b: ArrayBuffer | Uint8Array): boolean {
  const x = a instanceof Uint8Array ? a : new Uint8Array(a);
  const y = b instanceof Uint8Array ? b : new Uint8Array(b);
  return x.length === y.length && Buffer.from(x.buffer, x.byteOffset, x.length).equals(Buffer.from(y.buffer, y.byteOffset, y.length));
}

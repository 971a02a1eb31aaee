import { randomFillSync } from "node:crypto";

/**
 * Random bytes drawn from OpenSSL 4 KiB at a time, for the values made on
 * every request (status record ids, codes, request_uris, tokens): one call
 * into OpenSSL per few hundred values rather than one per value, as
 * `randomUUID` does. Each byte is handed out once.
 */
const pool = Buffer.alloc(4096);
let next = pool.length;

/**
 * Calls `read` with the pool and the start of `size` fresh bytes in it; `read`
 * may overwrite them (they are never handed out again) and must not keep the
 * buffer.
 */
export function fromRandomBytes<T>(size: number, read: (bytes: Buffer, start: number) => T): T {
  if (size > pool.length) throw new RangeError(`at most ${pool.length} random bytes at a time, not ${size}`);
  if (next + size > pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const start = next;
  next += size;
  return read(pool, start);
}

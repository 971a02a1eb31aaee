import { setImmediate } from "node:timers/promises";

/** At most this much is copied between two turns of the event loop. */
const slice = 4 * 1024 * 1024;

/**
 * Copies `sources`, one after another, into `target` from its start, with a
 * `setImmediate` after every 4 MB: one copy of a list of tens of megabytes
 * holds the event loop for tens of milliseconds, and on some machines for
 * over a hundred when the target's memory is new (the operating system
 * commits its pages as they are first written, about 10 ms per 4 MB there).
 * Returns how many bytes were copied.
 */
export async function copyInSlices(sources: readonly Uint8Array[], target: Uint8Array): Promise<number> {
  let offset = 0;
  let sinceTurn = 0;
  for (const source of sources) {
    for (let from = 0; from < source.length; ) {
      if (sinceTurn >= slice) {
        sinceTurn = 0;
        await setImmediate();
      }
      const piece = source.subarray(from, from + slice - sinceTurn);
      target.set(piece, offset);
      offset += piece.length;
      from += piece.length;
      sinceTurn += piece.length;
    }
  }
  return offset;
}

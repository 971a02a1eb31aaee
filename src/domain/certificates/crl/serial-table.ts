/**
 * The index of a list's entries: one table per serial width, each a sorted
 * run of fixed-width rows held in three typed arrays.
 *
 * A serial number of L octets (its magnitude, without DER's sign octet) goes
 * to the table of ceil(L / 4) 32-bit words, left-padded with zeros, so within
 * a table numeric order is word order and a lookup compares whole words. A
 * serial belongs to exactly one table, and rows hold the exact serial: no
 * hash, so nothing can collide. A directory over the first word's range
 * narrows each search to a few rows. Per entry: 4 bytes per word of serial, 4 bytes
 * of revocation time (seconds since 1950-01-01, which covers 1950–2086) and 1
 * byte of reason: 9 bytes for serials up to 4 octets, 13 up to 8, 21 for the
 * 16-octet random serials common today, 25 at RFC 5280's 20-octet maximum;
 * plus at most half a byte for the directory.
 */
export interface SerialTable {
  /** 32-bit words per serial, 1–5. */
  words: number;
  /** `words` words per row, most significant first, rows in ascending order, no two equal. */
  keys: Uint32Array;
  /** Revocation time of each row, seconds since timeBaseSeconds. */
  times: Uint32Array;
  /** RFC 5280 reason code of each row. */
  reasons: Uint8Array;
  /** First row of each bucket of the first word's range, and one past the last row at the end (see bucketOf). */
  directory: Uint32Array;
  /** The first word of the first and of the last row. */
  lowest: number;
  highest: number;
}

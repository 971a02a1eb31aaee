/**
 * Whole calendar years later, in UTC. A 29 February start ends on 28 February
 * when the target year has no leap day, rather than spilling into March.
 */
export function addUtcYears(date: Date, years: number): Date {
  const result = new Date(date.getTime());
  result.setUTCFullYear(date.getUTCFullYear() + years);
  if (result.getUTCMonth() !== date.getUTCMonth()) result.setUTCDate(0);
  return result;
}

/** X.509 times have whole seconds; this is the instant a certificate or CRL will actually say. */
export function truncateToSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

/**
 * Times this module can encode: UTCTime covers 1950–2049 and GeneralizedTime
 * the years after; an earlier year would be written as the wrong century.
 */
export function isEncodableTime(date: Date): boolean {
  const time = date.getTime();
  if (!Number.isFinite(time)) return false;
  const year = date.getUTCFullYear();
  return year >= 1950 && year <= 9999;
}

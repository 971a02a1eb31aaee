import { derTags, malformed } from "./der-cursor.ts";

/**
 * An X.509 Time (RFC 5280 §4.1.2.5) in epoch seconds: UTCTime
 * "YYMMDDHHMMSSZ" (years 1950–2049) or GeneralizedTime "YYYYMMDDHHMMSSZ",
 * both in UTC with seconds and without fractions, as RFC 5280 requires of
 * CRLs. Computed by arithmetic rather than through Date: it runs once per
 * entry of lists with millions of entries.
 */
export function readTimeSeconds(bytes: Uint8Array, tag: number, start: number, end: number, what: string): number {
  let year: number;
  let at: number;
  if (tag === derTags.utcTime) {
    if (end - start !== 13 || bytes[end - 1] !== 0x5a) throw malformed(`${what}: UTCTime must be YYMMDDHHMMSSZ`);
    const yy = twoDigits(bytes, start, what);
    year = yy >= 50 ? 1900 + yy : 2000 + yy;
    at = start + 2;
  } else if (tag === derTags.generalizedTime) {
    if (end - start !== 15 || bytes[end - 1] !== 0x5a) throw malformed(`${what}: GeneralizedTime must be YYYYMMDDHHMMSSZ`);
    year = twoDigits(bytes, start, what) * 100 + twoDigits(bytes, start + 2, what);
    at = start + 4;
  } else {
    throw malformed(`${what}: expected UTCTime or GeneralizedTime`);
  }
  const month = twoDigits(bytes, at, what);
  const day = twoDigits(bytes, at + 2, what);
  const hour = twoDigits(bytes, at + 4, what);
  const minute = twoDigits(bytes, at + 6, what);
  const second = twoDigits(bytes, at + 8, what);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    throw malformed(`${what}: not a valid date and time`);
  }
  return daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
}

function twoDigits(bytes: Uint8Array, at: number, what: string): number {
  const a = bytes[at]! - 0x30;
  const b = bytes[at + 1]! - 0x30;
  if (a < 0 || a > 9 || b < 0 || b > 9) throw malformed(`${what}: time has a non-digit`);
  return a * 10 + b;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

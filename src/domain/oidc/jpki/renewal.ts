/**
 * A JPKI certificate is valid until the holder's fifth birthday after issue,
 * and can be renewed at the municipality from three months before it ends:
 * from then on, pages flag it so the person renews before it stops working.
 */
export function renewalOpensAt(notAfter: number): number {
  const opens = new Date(notAfter);
  opens.setUTCMonth(opens.getUTCMonth() - 3);
  return opens.getTime();
}

/** Still valid, within its renewal window. */
export function isDueForRenewal(notAfter: number, now: number): boolean {
  return now < notAfter && now >= renewalOpensAt(notAfter);
}

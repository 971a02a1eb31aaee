/** RFC 5280 §5.3.1 CRLReason names and their codes (7 is unused). */
export const revocationReasonCodes = {
  unspecified: 0,
  keyCompromise: 1,
  cACompromise: 2,
  affiliationChanged: 3,
  superseded: 4,
  cessationOfOperation: 5,
  certificateHold: 6,
  removeFromCRL: 8,
  privilegeWithdrawn: 9,
  aACompromise: 10,
} as const;

export type RevocationReason = keyof typeof revocationReasonCodes;
export type RevocationReasonCode = (typeof revocationReasonCodes)[RevocationReason];

export const revocationReasons = Object.keys(revocationReasonCodes) as RevocationReason[];

export function isRevocationReason(value: string): value is RevocationReason {
  return Object.hasOwn(revocationReasonCodes, value);
}

export function revocationReasonCode(reason: RevocationReason): RevocationReasonCode {
  return revocationReasonCodes[reason];
}

/** The reason with this code, or undefined for 7 and anything outside 0–10. */
export function revocationReasonForCode(code: number): RevocationReason | undefined {
  return revocationReasons.find((reason) => revocationReasonCodes[reason] === code);
}

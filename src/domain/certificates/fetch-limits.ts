/** How long an exchange with a revocation source may take, body included, and how large its body may be. */
export interface FetchLimits {
  timeoutMs: number;
  maxBytes: number;
}

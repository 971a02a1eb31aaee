import { CrlRejectedError, type CrlLoader } from "./verified-crl.ts";

/**
 * The CRL loader the composition root uses. This build carries no DER CRL
 * reader yet: every list is refused, so the CRL source answers
 * "unavailable", never "good". The streaming reader replaces this file.
 */
export const loadCrl: CrlLoader = async () => {
  throw new CrlRejectedError("malformed", "this build has no CRL reader");
};

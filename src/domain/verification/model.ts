import type { CertificateType } from "../certificates/model.ts";
import type { JpkiFacts } from "../certificates/jpki-facts.ts";
import type { HashAlgorithm } from "./hash-algorithm.ts";

export type VerificationResult = "ok" | "signature_mismatch" | "certificate_expired" | "certificate_revoked";

/** One verification that ran to a result, as stored. */
export interface VerificationRecord {
  id: string;
  accountId: string;
  certificateId: string;
  /** Set only when the caller asked to identify the user. */
  userId: string | null;
  isNewUser: boolean;
  result: VerificationResult;
  hashAlgorithm: HashAlgorithm;
  /** The revocation check made in step 4; null when an earlier step decided the result. */
  certificateStatusId: string | null;
  /** The holder's facts sealed with the server key; null when not kept. */
  contentSealed: string | null;
  createdAt: number;
}

/** What a certificate says about its holder: facts for signature certificates, none for user authentication ones. */
export interface CertificateContent {
  type: CertificateType;
  facts: JpkiFacts | undefined;
}

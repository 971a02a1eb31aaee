import type { CertificateType } from "../../certificates/model.ts";

/** What the last check of a linked certificate found. */
export type LinkStatus = "good" | "revoked";

/** A link serves sign-in and step-up, and makes jpki_verified true, while its certificate was last found good and has not expired. */
export function isUsableLink(link: Pick<JpkiLinkRow, "status" | "notAfter">, now: number): boolean {
  return link.status === "good" && link.notAfter > now;
}

/**
 * A certificate linked to an end user. `certificateId` is the provider's own
 * record of it (in its certificate account); nothing of the certificate's
 * content is kept.
 */
export interface JpkiLinkRow {
  certificateId: string;
  userId: string;
  fingerprintSha256: string;
  type: CertificateType;
  notAfter: number;
  status: LinkStatus;
  linkedAt: number;
  checkedAt: number;
}

/** What JPKI sign-in needs from storage; src/storage implements it. */
export interface JpkiLinkStore {
  /** Inserts the link unless the certificate is linked already (to anyone); true when this call linked it. */
  insertLinkIfAbsent(link: JpkiLinkRow): Promise<boolean>;
  findLinkByFingerprint(fingerprintSha256: string): Promise<JpkiLinkRow | undefined>;
  /** The user's links, oldest first. */
  listLinks(userId: string): Promise<JpkiLinkRow[]>;
  updateLinkStatus(certificateId: string, status: LinkStatus, checkedAt: number): Promise<void>;
  /** Removes the user's link to the certificate; false when the user has no such link (another user's is never touched). */
  deleteLink(userId: string, certificateId: string): Promise<boolean>;
}

import type { CertificateUser, StoredCertificate } from "../../src/domain/certificates/model.ts";
import { newId } from "../../src/domain/ids.ts";
import type { CertificatesRepository } from "../../src/storage/certificates-repository.ts";

/**
 * `count` certificates of the issued one's account, each of a user of its
 * own: the issued certificate, then copies of its row under new ids, with
 * distinct fingerprints and serial numbers (issuing hundreds of real
 * certificates would take minutes and test nothing more about storage).
 */
export async function certificateCopies(
  repository: CertificatesRepository,
  issued: { certificate: StoredCertificate; user: CertificateUser },
  count: number,
): Promise<StoredCertificate[]> {
  const certificates = [issued.certificate];
  for (let i = 1; i < count; i++) {
    const userId = newId();
    await repository.insertUser({ id: userId, accountId: issued.certificate.accountId, createdAt: issued.user.createdAt });
    const copy = { ...issued.certificate, id: newId(), userId, fingerprintSha256: `${i}`.padStart(64, "0"), serialNumber: (0x1000 + i).toString(16) };
    await repository.insertCertificate(copy);
    certificates.push(copy);
  }
  return certificates;
}

import type { CertificateStore } from "./certificate-store.ts";
import type { Clock } from "../clock.ts";
import { DomainError, invalidField } from "../errors.ts";
import { canonicalUuid } from "../ids.ts";
import { certificateNotFound, userHasNoCertificate, userNotFound, uuidProblem } from "./lookup-errors.ts";
import type { CertificateType, CertificateUser, CheckMethod, StatusRecord, StoredCertificate } from "./model.ts";
import { creationTime } from "./model.ts";
import type { RevocationAnswer, RevocationSource } from "./revocation-source.ts";
import type { CheckResult, SourceResolver } from "./status-checks.ts";
import { statusRecord } from "./status-record.ts";

/** Most ids one batch call may carry. */
export const maxBatchSize = 1000;

/** One position of a batch: the id as sent, and either its result or why it has none. */
export type BatchItem<T> = { id: string } & ({ result: T; error?: never } | { error: DomainError; result?: never });

export type UserCheckResult = CheckResult & { user: CertificateUser };

/**
 * Status checks of many certificates or users in one call: each position is
 * answered as the single check would answer it (a result and one status
 * record, or the error as data), in request order, and a bad position never
 * fails the others. A repeated id is checked at each of its positions, so
 * every successful position has a record of its own.
 *
 * The work is a constant number of database round trips whatever the size:
 * one read of the certificates (and one of the users), one batch read per
 * revocation source involved, one insert of every record.
 */
export class BatchStatusChecks {
  constructor(
    private readonly repository: CertificateStore,
    private readonly sourceFor: SourceResolver,
    private readonly clock: Clock,
  ) {}

  async checkCertificates(accountId: string, ids: readonly string[], method?: CheckMethod): Promise<BatchItem<CheckResult>[]> {
    const parsed = parseIds(ids, "certificate_ids");
    const found = await this.repository.findCertificates(accountId, validIds(parsed));
    const targets = parsed.map((id) => (id instanceof DomainError ? id : (found.get(id) ?? certificateNotFound())));
    const records = await this.checkAll(targets, method);
    return ids.map((id, i) => {
      const record = records[i]!;
      const certificate = targets[i]!;
      if (record instanceof DomainError) return { id, error: record };
      return { id, result: { certificate: certificate as StoredCertificate, status: record } };
    });
  }

  async checkUsers(
    accountId: string,
    ids: readonly string[],
    type: CertificateType | undefined,
    method?: CheckMethod,
  ): Promise<BatchItem<UserCheckResult>[]> {
    const parsed = parseIds(ids, "user_ids");
    const wanted = validIds(parsed);
    const [users, latest] = await Promise.all([
      this.repository.findUsers(accountId, wanted),
      this.repository.findLatestCertificates(accountId, wanted, type),
    ]);
    const owners = parsed.map((id) => (id instanceof DomainError ? id : (users.get(id) ?? userNotFound())));
    const targets = parsed.map((id, i) => {
      const owner = owners[i]!;
      if (owner instanceof DomainError) return owner;
      return latest.get(owner.id) ?? userHasNoCertificate(type);
    });
    const records = await this.checkAll(targets, method);
    return ids.map((id, i) => {
      const record = records[i]!;
      if (record instanceof DomainError) return { id, error: record };
      const user = owners[i] as CertificateUser;
      return { id, result: { user, certificate: targets[i] as StoredCertificate, status: record } };
    });
  }

  /**
   * Asks each certificate's source (one checkMany per source) and writes a
   * record for every answer in one insert. Positions already failed pass
   * through; a source's per-item error becomes that position's error.
   */
  private async checkAll(
    targets: readonly (StoredCertificate | DomainError)[],
    method: CheckMethod | undefined,
  ): Promise<(StatusRecord | DomainError)[]> {
    const bySource = new Map<RevocationSource, number[]>();
    targets.forEach((target, position) => {
      if (target instanceof DomainError) return;
      const source = this.sourceFor(target);
      const positions = bySource.get(source) ?? [];
      positions.push(position);
      bySource.set(source, positions);
    });

    const answers: (RevocationAnswer | DomainError | undefined)[] = targets.map((t) => (t instanceof DomainError ? t : undefined));
    const now = this.clock();
    await Promise.all(
      [...bySource].map(async ([source, positions]) => {
        const certificates = positions.map((p) => targets[p] as StoredCertificate);
        const given = await source.checkMany(certificates, method, now);
        if (given.length !== positions.length) {
          throw new Error(`revocation source answered ${given.length} of ${positions.length} certificates`);
        }
        positions.forEach((position, k) => (answers[position] = given[k]!));
      }),
    );

    const createdAt = creationTime(this.clock());
    const records = answers.map((answer, i) => {
      if (answer === undefined) throw new Error(`position ${i} of the batch got no answer`);
      return answer instanceof DomainError ? answer : statusRecord(targets[i] as StoredCertificate, answer, createdAt);
    });
    await this.repository.insertStatuses(records.filter((r): r is StatusRecord => !(r instanceof DomainError)));
    return records;
  }
}

/** The canonical id at each position, or why that position holds no id. Refuses the whole call when the size is out of bounds. */
function parseIds(ids: readonly string[], field: string): (string | DomainError)[] {
  if (ids.length === 0) throw invalidField(field, `${field} must hold at least one id`);
  if (ids.length > maxBatchSize) {
    throw invalidField(field, `${field} holds ${ids.length} ids; at most ${maxBatchSize} are allowed per call`);
  }
  return ids.map((id, i) => uuidProblem(id, field, `${field}[${i}]`) ?? canonicalUuid(id));
}

function validIds(parsed: readonly (string | DomainError)[]): string[] {
  return parsed.filter((id): id is string => typeof id === "string");
}

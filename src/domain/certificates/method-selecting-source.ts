import { DomainError } from "../errors.ts";
import type { CheckMethod, StoredCertificate } from "./model.ts";
import {
  asItemError,
  BatchFirstSource,
  methodNotOffered,
  sourceUnavailable,
  type RevocationAnswer,
  type SingleMethodSource,
} from "./revocation-source.ts";

/**
 * Chooses the method for each check among single-method sources (CRL,
 * OCSP). A method the caller names is the only one used, and one the
 * certificate's issuer does not offer is check_method_not_offered. Without
 * one, the offered methods are tried in the configured order, the next only
 * when the one before could not answer (source_unavailable); the answer says
 * which method gave it.
 */
export class MethodSelectingSource extends BatchFirstSource {
  constructor(private readonly order: readonly SingleMethodSource[]) {
    super();
  }

  /**
   * One checkMany per method in order, for the certificates still without an
   * answer: a constant number of calls (so of reads) however many there are.
   */
  async checkMany(
    certificates: readonly StoredCertificate[],
    preferred: CheckMethod | undefined,
    now: number,
  ): Promise<(RevocationAnswer | DomainError)[]> {
    const offered = certificates.map((c) => this.order.filter((source) => source.offers(c)));
    // Undefined while no source has answered: an error built up front for every certificate (with its
    // stack) would cost more than a mock check itself, and a batch would build a thousand of them.
    const answers: (RevocationAnswer | DomainError | undefined)[] = certificates.map((_, i) =>
      preferred !== undefined && !offered[i]!.some((s) => s.method === preferred)
        ? methodNotOffered(preferred, offered[i]!.map((s) => s.method))
        : undefined,
    );
    const tried: string[][] = certificates.map(() => []);
    for (const source of this.order) {
      if (preferred !== undefined && source.method !== preferred) continue;
      const positions = certificates.flatMap((_, i) => {
        const answer = answers[i];
        const pending = answer === undefined || (answer instanceof DomainError && answer.code === "source_unavailable");
        return pending && offered[i]!.includes(source) ? [i] : [];
      });
      if (positions.length === 0) continue;
      const given = await source.checkMany(positions.map((i) => certificates[i]!), source.method, now).catch((error: unknown) => {
        const failure = asItemError(error);
        return positions.map(() => failure);
      });
      positions.forEach((position, k) => {
        const answer = given[k]!;
        if (answer instanceof DomainError && answer.code === "source_unavailable") tried[position]!.push(`${source.method.toUpperCase()}: ${answer.message}`);
        answers[position] = answer;
      });
    }
    // With more than one method tried, the error names why each could not answer.
    return answers.map((answer, i) => {
      if (answer === undefined) return sourceUnavailable("the certificate's issuer offers neither a CRL nor an OCSP responder");
      return answer instanceof DomainError && answer.code === "source_unavailable" && tried[i]!.length > 1 ? sourceUnavailable(tried[i]!.join("; ")) : answer;
    });
  }
}

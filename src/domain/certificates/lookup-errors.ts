import { DomainError, invalidField } from "../errors.ts";
import { isUuid } from "../ids.ts";
import type { CertificateType } from "./model.ts";

/**
 * The failures of looking up a certificate or a user by id, shared by single
 * and batch checks so that both answer a bad id in exactly the same words.
 * An id of another account gets the same error as an unknown one.
 */

export function certificateNotFound(): DomainError {
  return new DomainError("certificate_not_found", "no certificate with this id");
}

export function userNotFound(): DomainError {
  return new DomainError("user_not_found", "no user with this id");
}

export function userHasNoCertificate(type: CertificateType | undefined): DomainError {
  return new DomainError("user_not_found", type ? `the user has no certificate of type ${type}` : "the user has no certificate");
}

/** Why value is not an id for field (named as the caller should read it), or undefined when it is one. */
export function uuidProblem(value: string, field: string, label = field): DomainError | undefined {
  if (!value) return invalidField(field, `${label} is required`);
  if (!isUuid(value)) return invalidField(field, `${label} must be a UUID`);
  return undefined;
}

export function requireUuid(value: string, field: string): void {
  const problem = uuidProblem(value, field);
  if (problem) throw problem;
}

/**
 * Who an API call acts for. A caller is normally authenticated in full
 * before the call runs. A call may instead be admitted on a lookup this
 * instance remembers, read under API auth version `unconfirmedAt`: it is
 * then not yet confirmed, and the domain call that serves it must read the
 * current auth version with its first statement and see that same version
 * (assertCallerConfirmed) before it asks any source or writes anything. That saves
 * the statement a full authentication spends reading the version.
 */
export interface Caller {
  readonly accountId: string;
  /** The auth version the caller was admitted under, when that is still to be confirmed. */
  readonly unconfirmedAt?: number;
}

/**
 * The auth version a call read differs from the one its caller was admitted
 * under (or none was read): a token or an account may have changed since.
 * Nothing has been written; whoever admitted the caller authenticates it in
 * full and runs the call again, or answers the refusal.
 */
export class CallerNotConfirmed extends Error {
  constructor() {
    super("the caller's authentication must be confirmed before the call goes on");
    this.name = "CallerNotConfirmed";
  }
}

/** Throws CallerNotConfirmed unless the caller is confirmed, or was admitted under the version the call's first read saw. */
export function assertCallerConfirmed(caller: Caller, authVersionRead: number | undefined): void {
  if (caller.unconfirmedAt !== undefined && caller.unconfirmedAt !== authVersionRead) throw new CallerNotConfirmed();
}

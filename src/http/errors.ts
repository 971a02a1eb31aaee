/**
 * An HTTP error whose message is written for the client. Routes throw it; the
 * error handler renders it as JSON (APIs) or a page (browsers). Anything else
 * thrown is a bug and is answered as a bare 500.
 */
export class HttpError extends Error {
  override name = "HttpError";
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { DamagedInputError, DomainError } from "../domain/errors.ts";
import { isUnavailable } from "../storage/database.ts";
import { toConnectError } from "./errors.ts";
import type { Logger } from "../observability/logger.ts";

/**
 * Last line of defence for RPCs: a ConnectError passes unchanged; a domain
 * error becomes its Connect code with a google.rpc.ErrorInfo detail; a lost
 * database becomes `unavailable` (clients retry it); anything else is logged
 * with its stack and answered as a bare `internal`, never with its message.
 */
export function errorBoundary(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      const res = await next(req);
      // A streaming response's errors arise while its messages are read, after this call returned.
      return res.stream ? { ...res, message: mapStreamErrors(res.message, logger, req.url) } : res;
    } catch (error) {
      throw boundaryError(error, logger, req.url);
    }
  };
}

async function* mapStreamErrors<T>(messages: AsyncIterable<T>, logger: Logger, procedure: string): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (error) {
    throw boundaryError(error, logger, procedure);
  }
}

/** What errorBoundary answers for an error a handler threw. */
function boundaryError(error: unknown, logger: Logger, procedure: string): ConnectError {
  if (error instanceof ConnectError) return error;
  if (error instanceof DamagedInputError) logger.warn({ procedure, field: error.field, problem: error.message }, "damaged input refused");
  if (error instanceof DomainError) return toConnectError(error);
  if (isUnavailable(error)) {
    logger.warn({ procedure, err: error }, "database unavailable during rpc");
    return new ConnectError("the service is temporarily unavailable, retry later", Code.Unavailable);
  }
  logger.error({ procedure, err: error }, "rpc failed");
  return new ConnectError("the server failed to complete the call; it has been logged", Code.Internal);
}

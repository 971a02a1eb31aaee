import { pino, type Logger, type DestinationStream } from "pino";

export type { Logger };

/**
 * JSON lines on stdout. Request logs carry only method, path (never the query:
 * it can hold codes and state), status, duration and ids; headers and bodies
 * are never logged. The redact list is a second line of defence for fields a
 * future caller might pass by mistake.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "shomei" },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: {
        paths: [
          "password", "*.password", "secret", "*.secret", "token", "*.token", "authorization", "*.authorization",
          "headers", "*.headers", "code", "*.code", "refresh_token", "*.refresh_token", "client_secret", "*.client_secret",
        ],
        censor: "[redacted]",
      },
    },
    destination,
  );
}

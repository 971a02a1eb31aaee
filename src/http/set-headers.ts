import type { ServerResponse } from "node:http";

/** Sets each header of a fixed set, as Express's res.set does with an object. */
export function setHeaders(res: ServerResponse, headers: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

import type { IncomingMessage } from "node:http";
import type { Response } from "express";
import type { Oidc } from "../../../domain/oidc/provider.ts";

/**
 * Every `DPoP` header line of the request, each on its own: Node joins
 * repeated unknown headers with ", ", which would hide that two were sent.
 */
export function dpopHeaders(req: Pick<IncomingMessage, "rawHeaders">): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === "dpop") values.push(req.rawHeaders[i + 1]!);
  }
  return values;
}

/** When nonces are required, every answer of a DPoP endpoint carries the current one (RFC 9449 section 8.2). */
export function sendDpopNonce(oidc: Pick<Oidc, "dpop">, res: Response): void {
  const nonce = oidc.dpop.currentNonce();
  if (nonce !== undefined) res.set("DPoP-Nonce", nonce);
}

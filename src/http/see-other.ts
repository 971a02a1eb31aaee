import type { IncomingMessage, ServerResponse } from "node:http";
import accepts from "accepts";
import encodeUrl from "encodeurl";
import { escapeHtml } from "./pages/html.ts";

/**
 * A 303 See Other to `url`, answered as Express's `res.redirect(303, url)`
 * answers it (the Location encoded as encodeurl does; a short note in
 * text or HTML as the Accept header prefers, none if it takes neither;
 * Vary: Accept), but on a plain ServerResponse: the authorization endpoint
 * answers without Express (src/http/lean-authorize.ts) and its Express
 * route must answer alike.
 */
export function sendSeeOther(req: IncomingMessage, res: ServerResponse, url: string): void {
  const address = encodeUrl(url);
  res.setHeader("Location", address);
  addVary(res, "Accept");
  let body = "";
  const type = accepts(req).type(["text", "html"]);
  if (type === "text") {
    res.setHeader("Content-Type", "text/plain; charset=utf-8");
    body = `See Other. Redirecting to ${address}`;
  } else if (type === "html") {
    res.setHeader("Content-Type", "text/html; charset=utf-8");
    body = `<!DOCTYPE html><head><title>See Other</title></head><body><p>See Other. Redirecting to ${escapeHtml(address)}</p></body>`;
  }
  res.statusCode = 303;
  res.setHeader("Content-Length", Buffer.byteLength(body));
  if (req.method === "HEAD") res.end();
  else res.end(body);
}

/** Adds a field to Vary unless it is there already (or Vary is `*`). */
function addVary(res: ServerResponse, field: string): void {
  const current = res.getHeader("Vary");
  const value = Array.isArray(current) ? current.join(", ") : current === undefined ? "" : String(current);
  if (value === "") {
    res.setHeader("Vary", field);
    return;
  }
  const fields = value.split(",").map((f) => f.trim().toLowerCase());
  if (!fields.includes("*") && !fields.includes(field.toLowerCase())) res.setHeader("Vary", `${value}, ${field}`);
}

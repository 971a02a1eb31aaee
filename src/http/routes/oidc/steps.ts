import type { Response } from "express";
import type { Step } from "../../../domain/oidc/flow/authorization-flow.ts";

/** Sends the browser where the flow says: a page of ours, or back to the client. 303 so a form POST becomes a GET. */
export function sendStep(res: Response, step: Step): void {
  res.redirect(303, step.kind === "redirect" ? step.url : `/auth/${step.page}?interaction=${encodeURIComponent(step.interactionId)}`);
}

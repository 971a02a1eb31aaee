import type { IncomingMessage, ServerResponse } from "node:http";
import type { Step } from "../../../domain/oidc/flow/authorization-flow.ts";
import { sendSeeOther } from "../../see-other.ts";

/** Sends the browser where the flow says: a page of ours, or back to the client. 303 so a form POST becomes a GET. */
export function sendStep(req: IncomingMessage, res: ServerResponse, step: Step): void {
  sendSeeOther(req, res, step.kind === "redirect" ? step.url : `/auth/${step.page}?interaction=${encodeURIComponent(step.interactionId)}`);
}

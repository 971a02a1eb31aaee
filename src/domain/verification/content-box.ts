import { open, seal } from "../credentials/secret-box.ts";
import type { JpkiFacts } from "../certificates/jpki-facts.ts";

/**
 * Certificate content at rest: the facts as JSON, sealed with the server key.
 * The associated data names the verification, so a sealed value moved to
 * another row does not open there.
 */
export class ContentBox {
  constructor(private readonly key: Uint8Array) {}

  seal(verificationId: string, facts: JpkiFacts): string {
    return seal(this.key, JSON.stringify(facts), `verification:${verificationId}`);
  }

  open(verificationId: string, sealed: string): JpkiFacts {
    return JSON.parse(open(this.key, sealed, `verification:${verificationId}`).toString("utf8")) as JpkiFacts;
  }
}

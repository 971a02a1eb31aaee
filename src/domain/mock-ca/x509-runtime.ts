/**
 * The one place that loads @peculiar/x509. The library resolves its algorithm
 * providers through tsyringe, which needs the Reflect metadata polyfill loaded
 * first, and it signs through a WebCrypto provider: Node's own.
 */
import "reflect-metadata";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto);

export { webcrypto, x509 };

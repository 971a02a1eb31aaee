import type { Router } from "express";
import type { Config } from "../config/schema.ts";
import type { Accounts } from "../domain/accounts/accounts.ts";
import type { CertificateStore } from "../domain/certificates/certificate-store.ts";
import type { CrlLists } from "../domain/certificates/crl/crl-lists.ts";
import type { LinkSource } from "../domain/certificates/link-source.ts";
import type { CheckMethod, StoredCertificate } from "../domain/certificates/model.ts";
import type { OcspResponses } from "../domain/certificates/ocsp/ocsp-responses.ts";
import type { RevocationSource, SingleMethodSource } from "../domain/certificates/revocation-source.ts";
import type { Clock } from "../domain/clock.ts";
import type { Oidc } from "../domain/oidc/provider.ts";
import type { TrustAnchor } from "../domain/trust/trust-anchor.ts";
import type { WebhookEndpoints } from "../domain/webhooks/webhook-endpoints.ts";
import type { PageHints } from "../http/page-hints.ts";
import type { RpcService } from "../rpc/rpc-service.ts";
import type { Database } from "../storage/database.ts";

/**
 * Something a mode adds to the server beside what production has, installed
 * at the composition root (the mock environment is one; see
 * mode-extensions.ts, the one file that chooses them). The rest of the code
 * knows only this shape: the certificate half asks it for anchors, links and
 * sources, the transports for routes, services and page hints, `serve` for
 * its start-up work.
 */
export interface Extension {
  /** Builds the extension over the core services, before the ones that consult it exist. */
  install(context: ExtensionContext): InstalledExtension;
}

/** What an extension is built over. */
export interface ExtensionContext {
  /** The configuration in effect (its base URL names the bound port). */
  config: Config;
  database: Database;
  /** The server key (sealing, CSRF tokens). */
  secretKey: Buffer;
  clock: Clock;
  certificates: CertificateStore;
  /** The CRLs and OCSP answers of the trust anchors: a CA of the extension may join them as an issuer. */
  crlLists: CrlLists;
  ocspResponses: OcspResponses;
  /** The CRL and OCSP sources over them, and the order of methods the configuration prefers. */
  sources: Record<CheckMethod, SingleMethodSource>;
  methodOrder: readonly CheckMethod[];
}

/** The services an extension's routes, page hints and start-up use, once every one is built (the Domain has them). */
export interface ExtensionServices {
  accounts: Accounts;
  oidc: Oidc;
  webhooks: WebhookEndpoints;
  /** Every installed extension, this one among them. */
  extensions: readonly InstalledExtension[];
}

/** An installed extension: every part is optional, and production has none. */
export interface InstalledExtension {
  /** A trust anchor beside the configured ones; async, as it may exist only once first used. */
  trustAnchor?(): Promise<TrustAnchor>;
  /** Who a certificate belongs to beyond what the account has seen (see LinkSource); the first extension's counts. */
  linkSource?: LinkSource;
  /** The source of the certificates the extension answers for; undefined for every other certificate. */
  revocationSourceFor?(certificate: StoredCertificate): RevocationSource | undefined;
  /** RPC services it implements: each in place of production's of the same name, or beside them. */
  rpcServices?(): RpcService[];
  /** Its HTTP routes and pages, after production's. */
  registerRoutes?(router: Router, services: ExtensionServices): void;
  /** What it adds to the sign-in pages. */
  pageHints?(services: ExtensionServices): PageHints;
  /**
   * Work once the server listens and before it is ready (demo data); the lines it adds to the start-up
   * banner. url: where the port answers, for commands to try.
   */
  startUp?(services: ExtensionServices, url: string): Promise<string[]>;
}

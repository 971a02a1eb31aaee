import type { Router } from "express";
import { MockCards } from "../../domain/mock/mock-card.ts";
import { MockCaSource } from "../../domain/mock/mock-ca-source.ts";
import { MockEnvironment } from "../../domain/mock/mock-environment.ts";
import { MockLinkSource } from "../../domain/mock/mock-link-source.ts";
import type { StoredCertificate } from "../../domain/certificates/model.ts";
import type { RevocationSource } from "../../domain/certificates/revocation-source.ts";
import { DemoWebhookReceiver } from "../../domain/mock/demo-webhook-receiver.ts";
import { demoWebhooksPath } from "../../http/mock/demo-webhooks.ts";
import { registerMockRoutes } from "../../http/mock/mock-routes.ts";
import { mockPageHints } from "../../http/mock/mock-page-hints.ts";
import type { PageHints } from "../../http/page-hints.ts";
import { MockService } from "../../../gen/service/verify/v2/mock_service_pb.ts";
import { MockHandler } from "../../rpc/mock/mock-handler.ts";
import { service, type RpcService } from "../../rpc/rpc-service.ts";
import { MockCardsRepository } from "../../storage/mock/mock-cards-repository.ts";
import { MockRepository } from "../../storage/mock/mock-repository.ts";
import { WebhooksRepository } from "../../storage/webhooks-repository.ts";
import type { ExtensionContext, ExtensionServices, InstalledExtension } from "../extension.ts";

/**
 * The mock environment installed in a server (mock mode): the mock CA as a
 * trust anchor and an issuer of the same CRL and OCSP sources production
 * uses (over this server's own /mock routes), its stand-in for J-LIS's
 * linking services, MockService, the mock CA's routes and the demo pages, and
 * the mock card and one-time code on the sign-in pages.
 */
export class InstalledMock implements InstalledExtension {
  readonly environment: MockEnvironment;
  /** The demo users' mock cards, sealed with the server key. */
  readonly cards: MockCards;
  readonly linkSource: MockLinkSource;
  private readonly source: MockCaSource;
  private demoWebhooks: DemoWebhookReceiver | undefined;
  /** Set once the mock CA is an issuer of the CRL and OCSP sources; cleared if that failed, to try again. */
  private joined: Promise<void> | undefined;

  constructor(protected readonly context: ExtensionContext) {
    const { config, database, clock, certificates } = context;
    const repository = new MockRepository(database);
    this.environment = new MockEnvironment(
      repository,
      certificates,
      clock,
      `${config.baseUrl}/mock/ca.crl`,
      `${config.baseUrl}/mock/ocsp`,
      (serialNumber) => this.changed(serialNumber),
    );
    this.cards = new MockCards(new MockCardsRepository(database), context.secretKey);
    this.linkSource = new MockLinkSource(repository);
    this.source = new MockCaSource(repository, context.sources, context.methodOrder, () => this.joinSources());
  }

  trustAnchor() {
    return this.environment.trustAnchor();
  }

  /** The mock CA's certificates, and mock certificates another account verified. */
  revocationSourceFor(certificate: StoredCertificate): RevocationSource | undefined {
    return certificate.origin === "mock" || certificate.trustAnchor === "mock" ? this.source : undefined;
  }

  rpcServices(): RpcService[] {
    return [service(MockService, new MockHandler(this.environment), { access: "api_token", oauthScope: "mock" })];
  }

  registerRoutes(router: Router, services: ExtensionServices): void {
    this.demoWebhooks ??= new DemoWebhookReceiver(new WebhooksRepository(this.context.database), services.webhooks, this.context.clock, demoWebhooksPath);
    registerMockRoutes(router, this.environment, this.demoWebhooks, services.oidc, this.context.config);
  }

  pageHints(services: ExtensionServices): PageHints {
    return mockPageHints(this.cards, services.oidc.users);
  }

  /** The mock CA joins the CRL and OCSP sources as an issuer once it exists (it is created on first use). */
  private joinSources(): Promise<void> {
    return (this.joined ??= this.environment.issuer().then((issuer) => {
      this.context.crlLists.addIssuer(issuer);
      this.context.ocspResponses.addIssuer(issuer);
    })).catch((error: unknown) => {
      this.joined = undefined;
      throw error;
    });
  }

  /** After SetMockCertificateStatus: the re-issued CRL fetched now, the certificate's stored OCSP answer dropped. */
  private async changed(serialNumber: string): Promise<void> {
    await this.joinSources();
    const issuer = await this.environment.issuer();
    await Promise.all([
      this.context.crlLists.reissued(issuer, `${this.context.config.baseUrl}/mock/ca.crl`),
      this.context.ocspResponses.forget({ issuerAnchor: issuer.id, serialNumber }),
    ]);
  }
}

/** The installed mock of a domain built in mock mode (see extensionsOf in mode-extensions.ts). */
export function installedMock(domain: { extensions: readonly InstalledExtension[] }): InstalledMock {
  const found = domain.extensions.find((extension): extension is InstalledMock => extension instanceof InstalledMock);
  if (!found) throw new TypeError("the mock environment exists only in mock mode");
  return found;
}

/** The mock environment of a domain built in mock mode. */
export function mockOf(domain: { extensions: readonly InstalledExtension[] }): MockEnvironment {
  return installedMock(domain).environment;
}

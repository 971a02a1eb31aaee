import { open, seal } from "../credentials/secret-box.ts";

/**
 * Mock mode only: a JPKI card a person can use in a browser. Its certificate
 * was issued by the mock CA in an API account (so SetMockCertificateStatus
 * can revoke it) and linked to an end user; its key signs challenges.
 */
export interface MockCard {
  /** The API account the certificate was issued in, and its id there. */
  accountName: string;
  certificateId: string;
  certificatePem: string;
  privateKeyPem: string;
}

export interface MockCardStore {
  insertCardIfAbsent(userId: string, cardSealed: string, now: number): Promise<void>;
  findCard(userId: string): Promise<string | undefined>;
}

/** The mock cards of end users, sealed at rest with the server key (the certificate carries the mock person's facts). */
export class MockCards {
  constructor(
    private readonly store: MockCardStore,
    private readonly key: Buffer,
  ) {}

  async save(userId: string, card: MockCard, now: number): Promise<void> {
    await this.store.insertCardIfAbsent(userId, seal(this.key, JSON.stringify(card), `mock-card:${userId}`), now);
  }

  async find(userId: string): Promise<MockCard | undefined> {
    const sealed = await this.store.findCard(userId);
    return sealed === undefined ? undefined : (JSON.parse(open(this.key, sealed, `mock-card:${userId}`).toString("utf8")) as MockCard);
  }
}

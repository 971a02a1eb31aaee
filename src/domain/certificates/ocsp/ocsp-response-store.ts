/** A response is kept per certificate: its issuing trust anchor and serial number. */
export interface OcspResponseKey {
  issuerAnchor: string;
  /** Canonical lowercase hex, as certificates are stored. */
  serialNumber: string;
}

/** A verified response as instances sharing a database keep it. */
export interface StoredOcspResponse extends OcspResponseKey {
  /** The responder it came from. */
  url: string;
  /** The OCSPResponse as received: whoever reads it verifies it again. */
  der: Uint8Array;
  sha256: string;
  producedAt: number;
  thisUpdate: number;
  nextUpdate: number | undefined;
  /** Until when it may answer: nextUpdate, or thisUpdate plus the configured period when it has none. */
  usableUntil: number;
  fetchedAt: number;
}

export function responseKey(key: OcspResponseKey): string {
  return `${key.issuerAnchor} ${key.serialNumber}`;
}

/**
 * Where instances sharing a database keep the OCSP responses they fetched,
 * so that a response fetched by one answers every instance until it lapses.
 */
export interface OcspResponseStore {
  /** The stored responses of these certificates, by responseKey, in one read however many there are. */
  findMany(keys: readonly OcspResponseKey[]): Promise<Map<string, StoredOcspResponse>>;
  /** Stores a response unless the stored one for the certificate has a later thisUpdate. */
  save(response: StoredOcspResponse): Promise<void>;
  /** Drops the stored response of a certificate: its issuer's answer changed (see OcspResponses.forget). */
  forget(key: OcspResponseKey): Promise<void>;
}

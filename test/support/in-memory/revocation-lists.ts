import type { CrlListKey, CrlListRecord, CrlListStore, VerifiedListToStore } from "../../../src/domain/certificates/crl/crl-list-store.ts";
import { responseKey, type OcspResponseKey, type OcspResponseStore, type StoredOcspResponse } from "../../../src/domain/certificates/ocsp/ocsp-response-store.ts";
import type { CertificateTables } from "./certificates.ts";

const listKey = (key: CrlListKey) => `${key.issuerAnchor} ${key.url}`;

/**
 * CrlListStore in memory (src/storage/crl-lists-repository.ts): a list
 * replaces the stored one only in crlNumber and thisUpdate order, and only
 * if the stored one is still the one it was computed against; its status
 * records land in the certificates' history with it, or not at all.
 */
export class InMemoryCrlLists implements CrlListStore {
  private readonly records = new Map<string, CrlListRecord>();
  private readonly ders = new Map<string, { sha256: string; der: Uint8Array }>();

  constructor(private readonly certificates: CertificateTables) {}

  async find(key: CrlListKey): Promise<CrlListRecord | undefined> {
    const record = this.records.get(listKey(key));
    return record && { ...record };
  }

  async der(key: CrlListKey, sha256: string): Promise<Uint8Array | undefined> {
    const stored = this.ders.get(listKey(key));
    return stored && stored.sha256 === sha256 && this.records.get(listKey(key))?.sha256 === sha256 ? new Uint8Array(stored.der) : undefined;
  }

  async saveList(list: VerifiedListToStore): Promise<boolean> {
    const held = this.records.get(listKey(list));
    if (held?.sha256 !== undefined) {
      const inOrder = (held.crlNumber === undefined || (list.crlNumber !== undefined && list.crlNumber >= held.crlNumber)) && list.thisUpdate >= held.thisUpdate!;
      if (!inOrder || (list.replacing !== undefined && held.sha256 !== list.replacing)) return false;
    }
    this.records.set(listKey(list), {
      issuerAnchor: list.issuerAnchor,
      url: list.url,
      sha256: list.sha256,
      etag: list.etag,
      lastModified: list.lastModified,
      thisUpdate: list.thisUpdate,
      nextUpdate: list.nextUpdate,
      crlNumber: list.crlNumber,
      entries: list.entries,
      bytes: list.der.byteLength,
      fetchedAt: list.at,
      checkedAt: list.at,
      lastError: undefined,
      lastErrorAt: undefined,
    });
    this.ders.set(listKey(list), { sha256: list.sha256, der: new Uint8Array(list.der) });
    this.certificates.addStatuses(list.statusRecords);
    return true;
  }

  async markChecked(key: CrlListKey, sha256: string, at: number, etag: string | undefined, lastModified: string | undefined): Promise<void> {
    const record = this.records.get(listKey(key));
    if (record?.sha256 === sha256) Object.assign(record, { checkedAt: at, etag, lastModified, lastError: undefined, lastErrorAt: undefined });
  }

  async recordError(key: CrlListKey, message: string, at: number): Promise<void> {
    const record = this.records.get(listKey(key)) ?? emptyRecord(key);
    this.records.set(listKey(key), { ...record, lastError: message, lastErrorAt: at });
  }

  async list(): Promise<CrlListRecord[]> {
    return [...this.records.values()].sort((a, b) => (listKey(a) < listKey(b) ? -1 : 1)).map((r) => ({ ...r }));
  }

  async forget(key: CrlListKey): Promise<void> {
    this.records.delete(listKey(key));
    this.ders.delete(listKey(key));
  }
}

function emptyRecord(key: CrlListKey): CrlListRecord {
  return {
    issuerAnchor: key.issuerAnchor,
    url: key.url,
    sha256: undefined,
    etag: undefined,
    lastModified: undefined,
    thisUpdate: undefined,
    nextUpdate: undefined,
    crlNumber: undefined,
    entries: undefined,
    bytes: undefined,
    fetchedAt: undefined,
    checkedAt: undefined,
    lastError: undefined,
    lastErrorAt: undefined,
  };
}

/** OcspResponseStore in memory (src/storage/ocsp-responses-repository.ts): a response replaces the stored one unless that one has a later thisUpdate. */
export class InMemoryOcspResponses implements OcspResponseStore {
  readonly responses = new Map<string, StoredOcspResponse>();

  async findMany(keys: readonly OcspResponseKey[]): Promise<Map<string, StoredOcspResponse>> {
    const found = new Map<string, StoredOcspResponse>();
    for (const key of keys) {
      const response = this.responses.get(responseKey(key));
      if (response) found.set(responseKey(key), { ...response, der: new Uint8Array(response.der) });
    }
    return found;
  }

  async save(response: StoredOcspResponse): Promise<void> {
    const held = this.responses.get(responseKey(response));
    if (held && held.thisUpdate > response.thisUpdate) return;
    this.responses.set(responseKey(response), { ...response, der: new Uint8Array(response.der) });
  }

  async forget(key: OcspResponseKey): Promise<void> {
    this.responses.delete(responseKey(key));
  }
}

import type { StatusCursor } from "./certificate-store.ts";
import { decodePageToken as decode, encodePageToken as encode } from "../page-token.ts";

/** A certificate's status records, page by page: the listing is the certificate. */
export function encodePageToken(certificateId: string, cursor: StatusCursor): string {
  return encode(certificateId, { at: cursor.createdAt, id: cursor.id });
}

export function decodePageToken(certificateId: string, token: string): StatusCursor {
  const { at, id } = decode(certificateId, token, true);
  return { createdAt: at, id: id! };
}

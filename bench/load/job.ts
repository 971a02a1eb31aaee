/**
 * What the parent asks the load generator process to do, and what it answers.
 * Plain data: jobs cross a process boundary.
 */
export interface HttpJob {
  protocol: "http1";
  url: string;
  method: "GET" | "POST";
  headers?: Record<string, string>;
  /** Sent in turn, one per request; the same body when one. */
  bodies?: string[];
  /** The status a request must answer to count (200 when not given). */
  expectStatus?: number;
  /** A redirect must carry this in its Location (e.g. `code=`) to count. */
  expectLocation?: string;
  /**
   * Refresh token chains (rotation makes every token single-use): `template`
   * is sent with `{token}` replaced by a token never sent before, first from
   * `tokens`, then the refresh_token each answer gives. `primerPath` is a GET
   * each connection makes first, not counted.
   */
  chain?: { template: string; tokens: string[]; primerPath: string };
}

export interface Http2Job {
  protocol: "grpc";
  /** http://host:port of an h2c server. */
  origin: string;
  /** The request path, e.g. /service.verify.v2.CertificateService/CheckCertificateStatus */
  path: string;
  headers?: Record<string, string>;
  /** Length-prefixed gRPC messages, base64, sent in turn. */
  frames: string[];
}

export type LoadJob = (HttpJob | Http2Job) & { seconds: number; connections: number; name: string };

export interface LoadResult {
  /** How long the job ran, from its first connection to its last answer counted, in seconds. */
  seconds: number;
  /** Answers that counted (expected status) per second of `seconds`. */
  rate: number;
  /** Milliseconds. */
  p99: number;
  ok: number;
  failed: number;
  firstFailure?: string;
}

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

/**
 * Two jobs at once, one against each side's server, the servers taking turns
 * on their CPU (bench/load/turns.ts): `pids` are the two servers' processes,
 * `first` the side that runs first, `turnMs` how long a turn lasts; each job
 * runs until its server has had `seconds` of turns.
 */
export interface TurnsJob {
  jobs: [LoadJob, LoadJob];
  pids: [number, number];
  first: 0 | 1;
  turnMs: number;
  /** Split PostgreSQL's CPU time between the sides, at their turns. */
  withPostgres: boolean;
  /**
   * Each side's first turns, until it has run this long, are not counted
   * (answers, latencies, CPU time): its server may have been idle for a
   * while, and on this machine a process idle for more than a few seconds
   * runs slower for its first half second back (docs/bench-method.md,
   * Idle processes start slow). Each job runs this much longer than
   * its `seconds`. 0: count from the start.
   */
  settleMs: number;
}

/** A side's figures from taking turns: `seconds` are its server's turns; the CPU times are read while it was stopped. */
export interface TurnResult extends LoadResult {
  /** The server's CPU time over the job, ms (NaN when /proc does not say). */
  cpuMs: number;
  /** PostgreSQL's CPU time during the side's turns, ms (NaN when not asked for). */
  databaseCpuMs: number;
}

/**
 * One job run against one server until the server is warm (see warmedUp in
 * bench/stats.ts): its CPU per answer is read every `sliceMs`, and the job
 * stops once it has stopped falling and stands within reach of `reference`
 * (µs, the level another process of the server reached), but not before
 * `minSeconds`, or after `maxSeconds`.
 */
export interface WarmUpJob {
  job: LoadJob;
  pid: number;
  sliceMs: number;
  minSeconds: number;
  maxSeconds: number;
  reference?: number;
}

/** A warm-up's figures: the server's CPU time per answer in each slice, in µs (Infinity for a slice without answers). */
export interface WarmUpResult extends LoadResult {
  cpuUsPerAnswer: number[];
}

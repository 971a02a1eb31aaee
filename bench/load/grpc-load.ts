/**
 * gRPC load: autocannon does not speak HTTP/2, so this is a small loop over
 * node:http2 that keeps `connections` calls in flight, multiplexed over a
 * few sessions as gRPC clients do, until the job's Control says stop.
 */
import http2 from "node:http2";
import type { Http2Job, LoadJob } from "./job.ts";
import { fail, newTally, type Control, type Tally } from "./tally.ts";

/** Concurrent gRPC calls per HTTP/2 session. */
const streamsPerSession = 8;

/** Keeps `job.connections` gRPC calls in flight until `control.done`; answers still in flight then are left uncounted. */
export async function runGrpc(job: Http2Job & LoadJob, control: Control, tally: Tally = newTally()): Promise<Tally> {
  const frames = job.frames.map((frame) => Buffer.from(frame, "base64"));
  const sessions = Array.from({ length: Math.max(1, Math.ceil(job.connections / streamsPerSession)) }, () => http2.connect(job.origin));
  await Promise.all(sessions.map((session) => new Promise((resolve, reject) => session.once("connect", resolve).once("error", reject))));
  let stopping = false;
  let turn = 0;
  const call = (session: http2.ClientHttp2Session) =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const stream = session.request({
        ":method": "POST",
        ":path": job.path,
        "content-type": "application/grpc+proto",
        te: "trailers",
        ...job.headers,
      });
      let status = 0;
      let grpcStatus: string | undefined;
      let grpcMessage = "";
      stream.on("response", (headers) => {
        status = Number(headers[":status"]);
        if (headers["grpc-status"] !== undefined) grpcStatus = String(headers["grpc-status"]);
        grpcMessage = String(headers["grpc-message"] ?? "");
      });
      stream.on("trailers", (trailers) => {
        grpcStatus = String(trailers["grpc-status"]);
        grpcMessage = String(trailers["grpc-message"] ?? "");
      });
      stream.on("data", () => undefined);
      stream.on("error", (error: Error) => {
        if (!stopping) fail(tally, error.message);
      });
      stream.on("close", () => {
        const ended = performance.now();
        if (status === 200 && grpcStatus === "0") {
          tally.ok++;
          tally.latencies.push(control.latency(ended - started, ended));
        } else if (!stopping && !stream.rstCode) fail(tally, `HTTP ${status} grpc-status ${grpcStatus} ${decodeURIComponent(grpcMessage)}`);
        resolve();
      });
      stream.end(frames[turn++ % frames.length]);
    });
  const loops = Promise.all(
    Array.from({ length: job.connections }, async (_, i) => {
      const session = sessions[i % sessions.length]!;
      while (!stopping) await call(session);
    }),
  );
  await control.done;
  // A call in flight now may wait on a server that is stopped: its answer is not waited for, as autocannon does not wait.
  stopping = true;
  for (const session of sessions) session.destroy();
  await loops;
  return tally;
}

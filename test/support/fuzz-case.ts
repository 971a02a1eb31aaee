import type { RawRequest } from "./raw-client.ts";

/** How a request speaks to the server, which decides where its status and error code are found. */
export type WireProtocol = "connect" | "connect-get" | "grpc" | "grpc-web" | "http";

/** One generated request of a fuzz run, with what a report needs to group and replay it. */
export interface FuzzCase extends RawRequest {
  protocol: WireProtocol;
  /** The procedure or route pattern, for grouping findings ("/service.verify.v2.X/Y", "POST /api/oidc/v1/token"). */
  route: string;
  /** What was done to the request, e.g. "grpc-web, bad token, bits flipped". */
  description: string;
}

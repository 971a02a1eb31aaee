import type { DescService } from "@bufbuild/protobuf";
import type { ContextValues, HandlerContext } from "@connectrpc/connect";
import { headerValue, type AnyRequest, type AnyResponse } from "../exchange.ts";

/**
 * A HandlerContext that builds what a handler asks for only when it asks:
 * the certificate handlers read `values` and nothing else, so the abort
 * signal and the header objects usually never exist.
 */
export class LazyContext implements HandlerContext {
  readonly method: HandlerContext["method"];
  readonly service: DescService;
  readonly requestMethod = "POST";
  readonly timeoutMs = () => undefined;
  private controller?: AbortController;
  private requestHeaders?: Headers;
  private responseHeaders?: Headers;
  private responseTrailers?: Headers;

  constructor(
    private readonly req: AnyRequest,
    private readonly res: AnyResponse,
    procedure: { method: HandlerContext["method"]; service: DescService },
    private readonly path: string,
    readonly values: ContextValues,
    readonly protocolName: string,
  ) {
    this.method = procedure.method;
    this.service = procedure.service;
  }

  get url(): string {
    return `http://${headerValue(this.req.headers.host) ?? "localhost"}${this.path}`;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = (this.controller = new AbortController());
      this.res.once("close", () => {
        if (!this.res.writableFinished) controller.abort();
      });
    }
    return this.controller.signal;
  }

  get requestHeader(): Headers {
    if (!this.requestHeaders) {
      this.requestHeaders = new Headers();
      for (const [name, value] of Object.entries(this.req.headers)) {
        if (value !== undefined && !name.startsWith(":")) this.requestHeaders.set(name, headerValue(value)!);
      }
    }
    return this.requestHeaders;
  }

  get responseHeader(): Headers {
    return (this.responseHeaders ??= new Headers());
  }

  get responseTrailer(): Headers {
    return (this.responseTrailers ??= new Headers());
  }

  /**
   * Response headers a handler set, if any; for Connect unary its trailers
   * too, prefixed as that protocol sends them in the head.
   */
  touchedHeaders(withTrailers: boolean): Headers | undefined {
    if (!this.responseHeaders && !(withTrailers && this.responseTrailers)) return undefined;
    const all = new Headers(this.responseHeaders);
    if (withTrailers) this.responseTrailers?.forEach((value, key) => all.set(`trailer-${key}`, value));
    return all;
  }

  /** The trailers a handler set, to which the status is added (gRPC). */
  trailers(): Headers {
    return new Headers(this.responseTrailers);
  }
}

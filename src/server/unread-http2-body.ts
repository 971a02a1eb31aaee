import http2 from "node:http2";

/**
 * Ends an HTTP/2 stream whose answer is complete while the client is still
 * sending its body (an oversized body refused part way through, an error
 * answered before the body was read).
 *
 * The unread part would otherwise stay buffered on a paused stream: the
 * stream never closes, so the request never leaves the in-flight count (and
 * shutdown waits its whole timeout for it), and the bytes it holds count
 * against the connection's flow-control window and its memory limit until
 * the other streams of the connection stall. RFC 9113 §8.1 provides for
 * this: after a complete response the server may ask the client to stop
 * sending with RST_STREAM NO_ERROR, and the client keeps the response.
 * HTTP/1.1 needs none of this: Node's server reads and discards what a
 * finished response left unread.
 */
export function endUnreadBodyOnAnswer(req: http2.Http2ServerRequest): void {
  const stream = req.stream;
  // Node's compatibility response always asks for trailers once the last DATA frame is queued, and
  // its listener, registered before this one, hands them (or none) to nghttp2 on the next turn
  // (Http2Stream#sendTrailers): after that turn every frame of the answer is queued.
  stream.once("wantTrailers", () =>
    setImmediate(() => {
      if (req.complete || stream.closed) return;
      // nghttp2 sends what is queued first, then RST_STREAM (node's Http2Stream#close with NO_ERROR).
      stream.close(http2.constants.NGHTTP2_NO_ERROR);
      // The request is over: what the stream buffered of the body is dropped (the request's own reader
      // would pause it again), so that it ends and closes, and the request leaves the in-flight count.
      stream.removeAllListeners("data");
      stream.resume();
    }),
  );
}

/**
 * The @connectrpc/connect and @connectrpc/connect-node release the code in
 * this folder was written against. It works at Connect's protocol layer
 * (`@connectrpc/connect/protocol*`, connect-node's universal request and
 * response) and relies on how that release behaves: the request is read and
 * decoded before the first interceptor, the context values given with the
 * request are the ones interceptors and handlers see, the only
 * `unimplemented` raised before the interceptors is an unknown content
 * coding. test/unit/connect-protocol.test.ts checks each of these against
 * the installed release and fails when the version differs: read the
 * release's changes, re-check, then move this pin.
 */
export const pinnedConnectVersion = "2.1.1";

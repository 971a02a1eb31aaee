/**
 * What a response must never show a client: traces of the implementation
 * behind an error. Each pattern names a kind of leak; they are written so that
 * they cannot match the legitimate content of shomei's answers (base64 and
 * base64url values, PEM blocks, UUIDs, HTML pages, OAuth error texts, Connect
 * error messages about fields), and are case-sensitive unless noted.
 */
export const leakPatterns: readonly { name: string; pattern: RegExp }[] = [
  // A V8 stack frame: "    at handler (/app/src/x.ts:12:5)" or "    at async Promise.all (index 0)".
  { name: "stack trace", pattern: /(?:^|\n|\\n)\s*at (?:async )?\S[^\n]*(?:\(|\s)(?:\/|file:|node:|native|index \d)/ },
  { name: "stack trace", pattern: / {4}at / },
  // Dependency and source files: the layout of the deployment. base64 has no "." so PEM and tokens cannot match.
  { name: "dependency path", pattern: /node_modules/ },
  { name: "source path", pattern: /\/(?:src|test|gen|dist|lib)\/[\w./-]*\.(?:[cm]?[jt]s|tsx?)\b/ },
  { name: "module URL", pattern: /\b(?:file:\/\/\/|node:internal)/ },
  // JavaScript error classes and V8's wording for programming errors: an exception escaped the boundary as text.
  { name: "JavaScript error class", pattern: /\b(?:TypeError|RangeError|ReferenceError|SyntaxError|EvalError|URIError|AggregateError|InternalError|DOMException|AbortError)\b/ },
  {
    name: "V8 error text",
    pattern: /Cannot read propert|Cannot set propert|is not a function|is not iterable|is not defined\b|Maximum call stack|Invalid array length|Invalid string length|URI malformed|\[object Object\]|undefined is not|null is not/,
  },
  // Node's own error codes (ERR_INVALID_ARG_TYPE, ERR_STREAM_PREMATURE_CLOSE, ...) and system errors.
  { name: "Node error code", pattern: /\bERR_[A-Z0-9_]{4,}\b|\bE(?:CONNRESET|CONNREFUSED|PIPE|ADDRINUSE|NOENT|ACCES|MFILE|TIMEDOUT)\b/ },
  // SQLite (better-sqlite3): error codes, class name and messages.
  { name: "SQLite error", pattern: /SQLITE_|SqliteError|no such (?:table|column)|constraint failed|database is locked|too many SQL variables/ },
  // PostgreSQL (pg): messages of the server and the driver, including what a NUL byte or an out-of-range number causes.
  {
    name: "PostgreSQL error",
    pattern: /syntax error|violates (?:unique|foreign key|not-null|check) constraint|duplicate key value|invalid input syntax|invalid byte sequence for encoding|out of range for type|value too long for type|current transaction is aborted|relation "|column "[^"]*" (?:of relation|does not exist)|unterminated quoted|SQLSTATE/,
  },
  // Query builder and SQL keywords as a query would show them ("select ... from", "insert into").
  { name: "SQL text", pattern: /\bkysely\b|\b(?:select|SELECT) [^\n]{0,80}\b(?:from|FROM)\b "|\b(?:insert into|INSERT INTO|delete from|DELETE FROM|UPDATE) "/ },
  // @bufbuild/protobuf's binary decoder, which Connect wraps as "parse binary: ...": the wire format's internals.
  {
    name: "protobuf decoder text",
    pattern: /parse binary|serialize binary|illegal tag|premature EOF|cant skip wire type|invalid wire type|invalid end group tag|invalid varint|too many bytes when decoding varint|invalid (?:u?int32|float32):/,
  },
  // Connect's own framing internals surfacing as the message of an error.
  { name: "Connect framing text", pattern: /invalid envelope|do not know how to decompress|received parsed JSON request body/ },
  // A JavaScript object dumped into a response: "[Function: x]", "<ref *1>", "Symbol(".
  { name: "object dump", pattern: /\[Function(?:: [^\]]*)?\]|<ref \*\d+>|\bSymbol\(/ },
];

/** The name of the first leak found in `text`, or undefined. */
export function revealedInternals(text: string): string | undefined {
  for (const { name, pattern } of leakPatterns) if (pattern.test(text)) return name;
  return undefined;
}

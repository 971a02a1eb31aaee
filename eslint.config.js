import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["gen/**", "node_modules/**", "data/**", "coverage/**", "dist/**", "clients/typescript/gen/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Type-aware rules. Not all of recommendedTypeChecked: over src, test and bench it reports some 90 findings, most
    // of them style (require-await on async interface implementations, type assertions tests make for clarity) or
    // `any` from JSON bodies in tests. The rules that catch real bugs are on: with Express 5 an async handler's
    // rejected promise becomes a 500, so a promise nobody awaits (no-floating-promises), one passed where a
    // callback's result is ignored (no-misused-promises), or an await of something that is not a promise
    // (await-thenable) is a fault in the error path, not a matter of style.
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
    },
  },
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly", URL: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", fetch: "readonly", AbortController: "readonly", TextEncoder: "readonly", TextDecoder: "readonly", crypto: "readonly", performance: "readonly", structuredClone: "readonly", SharedArrayBuffer: "readonly", Atomics: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": ["error", { allow: ["warn", "error", "log"] }],
      eqeqeq: ["error", "always"],
    },
  },
  {
    // bin/ is CommonJS (bin/package.json says why).
    files: ["bin/**/*.js", "bin/**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", module: "writable", __dirname: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/cli/**"],
    rules: { "no-console": "error" },
  },
  {
    // Connect's protocol layer (the `@connectrpc/connect/protocol*` entry points, connect-node's universal request
    // and response) is internal to Connect and changes between releases: only src/server/connect-protocol/ works
    // with it, pinned to one release (pinned-version.ts, test/unit/connect-protocol.test.ts). src/rpc/errors.ts
    // takes the protocol's code names from it for batch items.
    files: ["src/**/*.ts"],
    ignores: ["src/server/connect-protocol/**", "src/rpc/errors.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [{ regex: "^@connectrpc/connect/protocol", message: "Connect's protocol layer is used only in src/server/connect-protocol/." }],
          paths: [
            {
              name: "@connectrpc/connect-node",
              importNames: ["universalRequestFromNodeRequest", "universalResponseToNodeResponse"],
              message: "Connect's protocol layer is used only in src/server/connect-protocol/.",
            },
          ],
        },
      ],
    },
  },
  {
    // The domain holds the rules and owns its types; transports, storage and the composition root depend on it,
    // never the other way round (docs/architecture.md, Layers). Storage is reached through the narrow store
    // interfaces the domain declares.
    files: ["src/domain/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./)+(storage|http|rpc|server|app|cli|observability|adapters)(/|$)",
              message: "src/domain imports neither storage, transports nor the composition root: declare the interface it needs.",
            },
            {
              regex: "^(express|@connectrpc/.*|kysely|pg|better-sqlite3|pino|prom-client)$",
              message: "src/domain imports neither Express, Connect nor SQL.",
            },
            {
              regex: "^node:(fs|fs/promises|worker_threads|child_process|http|https|http2|dgram)$",
              message: "src/domain does no I/O: declare a port, implement it in src/adapters.",
            },
          ],
        },
      ],
    },
  },
);

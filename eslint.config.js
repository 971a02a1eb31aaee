import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["gen/**", "node_modules/**", "data/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
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
    files: ["src/**/*.ts"],
    ignores: ["src/cli/**"],
    rules: { "no-console": "error" },
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
              regex: "^(\\.\\./)+(storage|http|rpc|server|app|cli|observability)(/|$)",
              message: "src/domain imports neither storage, transports nor the composition root: declare the interface it needs.",
            },
            {
              regex: "^(express|@connectrpc/.*|kysely|pg|better-sqlite3|pino|prom-client)$",
              message: "src/domain imports neither Express, Connect nor SQL.",
            },
          ],
        },
      ],
    },
  },
);

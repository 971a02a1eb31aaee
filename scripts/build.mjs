// Builds the server into dist/: one ES module for the process (dist/shomei.js),
// one for the CRL worker thread (dist/crl-worker.mjs, the name the sources'
// `new URL("./crl-worker.mjs", import.meta.url)` finds beside the bundle) and
// the SQLite checkpointer's plain JavaScript worker, copied. Packages stay in
// node_modules (not bundled), source maps point at src/. esbuild rather than
// tsc: it builds in well under a second, where tsc's emit would type-check the
// tree again (`npm run typecheck` does that); it bundles, so the process loads
// one file instead of some three hundred modules at start.
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { build } from "esbuild";

const out = "dist";
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const common = {
  bundle: true,
  // Code loaded with import() (the mock CA and its X.509 library) becomes a chunk of its own, read only when used.
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Packages are bundled too (resolving and loading some fifty of them from node_modules was most of the
  // start-up), but for better-sqlite3, a native addon; pg, loaded only for PostgreSQL; and iconv-lite, half a
  // megabyte of code pages that body-parser requires as it loads but reads only for a body in another charset
  // than UTF-8: loaded by require from node_modules, its tables stay unread (in the bundle the start-up parsed
  // them all). It is a dependency of ours for that reason.
  external: ["better-sqlite3", "pg", "iconv-lite"],
  // Bundled CommonJS packages call require() for node's own modules; an ES module has none until given one.
  banner: { js: 'import { createRequire as __shomeiCreateRequire } from "node:module"; const require = __shomeiCreateRequire(import.meta.url);' },
  // Whitespace and syntax only, names kept: the start-up parses, decodes and maps (source maps) a third less
  // text, and a stack trace still names our functions; the maps lead back to src/.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: "linked",
  // The maps point into src/ and node_modules/, which are beside dist/: no copies of the sources inside them.
  sourcesContent: false,
  logLevel: "warning",
};

await Promise.all([
  build({ ...common, entryPoints: { shomei: "src/cli/main.ts" }, outdir: out, outExtension: { ".js": ".js" } }),
  build({ ...common, entryPoints: { "crl-worker": "src/adapters/crl/crl-worker.ts" }, outdir: out, outExtension: { ".js": ".mjs" } }),
]);
copyFileSync("src/storage/sqlite-checkpoint-worker.mjs", `${out}/sqlite-checkpoint-worker.mjs`);
console.log(`built ${out}/shomei.js`);

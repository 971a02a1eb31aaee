// Builds the server into dist/: one CommonJS script for the process
// (dist/shomei.cjs) and V8's code cache for it (dist/shomei.code-cache), one
// ES module for the CRL worker thread (dist/crl-worker.mjs) and the SQLite
// checkpointer's plain JavaScript worker, copied. Packages stay in
// node_modules (not bundled), source maps point at src/. esbuild rather than
// tsc: it builds in well under a second, where tsc's emit would type-check the
// tree again (`npm run typecheck` does that); it bundles, so the process loads
// one file instead of some three hundred modules at start.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { build } from "esbuild";

const out = "dist";
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

/** Every non-ASCII UTF-16 code unit as a \uXXXX escape (a character beyond the BMP as its surrogate pair). */
const escapeNonAscii = (text) => text.replace(/[\u0080-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`);

// Our sources' non-ASCII text (the Japanese pages) reaches the bundle as \u escapes. V8 holds a script with
// one non-ASCII character in it at two bytes a character: the bundle read as 6 MB instead of 3, decoded from
// UTF-8 at every start, some 1,500 page faults and 20 ms more. esbuild escapes such text itself (its charset
// "ascii") except in tagged templates, where an escape would change the template's raw text; our one tag
// (html, src/http/pages/html.ts) reads the cooked text, which is the same either way.
const sources = path.resolve("src") + path.sep;
const asciiSources = {
  name: "ascii-sources",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async ({ path: file }) => (file.startsWith(sources) ? { contents: escapeNonAscii(await readFile(file, "utf8")), loader: "ts" } : undefined));
  },
};

// What both builds share.
const common = {
  plugins: [asciiSources],
  bundle: true,
  platform: "node",
  target: "node20",
  // Packages are bundled too (resolving and loading some fifty of them from node_modules was most of the
  // start-up), but for better-sqlite3, a native addon; pg, loaded only for PostgreSQL; and iconv-lite, half a
  // megabyte of code pages that body-parser requires as it loads but reads only for a body in another charset
  // than UTF-8: loaded by require from node_modules, its tables stay unread (in the bundle the start-up parsed
  // them all). It is a dependency of ours for that reason.
  external: ["better-sqlite3", "pg", "iconv-lite"],
  // Whitespace and syntax only, names kept: the start-up parses, decodes and maps (source maps) a third less
  // text, and a stack trace still names our functions; the maps lead back to src/.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: "linked",
  // The maps point into src/ and node_modules/, which are beside dist/: no copies of the sources inside them.
  sourcesContent: false,
  logLevel: "warning",
  metafile: true,
};

const [server] = await Promise.all([
  // The process: one CommonJS script, so that bin/shomei.js can load it with V8's code cache
  // (bin/built-code.mjs), which Node 20 gives scripts and not ES modules. Code loaded with import()
  // (the mock and its X.509 library) stays in the bundle and is evaluated only when imported.
  build({
    ...common,
    entryPoints: { shomei: "src/cli/main.ts" },
    outdir: out,
    format: "cjs",
    outExtension: { ".js": ".cjs" },
    // The sources are ES modules, strict throughout; their import.meta.url is the bundle's, as in an ES module.
    banner: { js: '"use strict";const __shomeiModuleUrl=require("node:url").pathToFileURL(__filename).href;' },
    define: { "import.meta.url": "__shomeiModuleUrl" },
  }),
  // The CRL worker thread: an ES module of its own, the name the sources' `new URL("./crl-worker.mjs",
  // import.meta.url)` finds beside the bundle. Bundled CommonJS packages call require() for node's own
  // modules; an ES module has none until given one.
  build({
    ...common,
    entryPoints: { "crl-worker": "src/adapters/crl/crl-worker.ts" },
    outdir: out,
    format: "esm",
    outExtension: { ".js": ".mjs" },
    banner: { js: 'import { createRequire as __shomeiCreateRequire } from "node:module"; const require = __shomeiCreateRequire(import.meta.url);' },
  }),
]);
copyFileSync("src/storage/sqlite-checkpoint-worker.mjs", `${out}/sqlite-checkpoint-worker.mjs`);

// The start-up reads the bundle as one-byte text only while it is ASCII (see asciiSources).
const nonAscii = /[\u0080-\u00ff]/.exec(readFileSync(`${out}/shomei.cjs`, "latin1"));
if (nonAscii) throw new Error(`dist/shomei.cjs holds a non-ASCII character at offset ${nonAscii.index}: write it as an escape`);

// A script compiled with node:vm has no loader for import(): a package left out of the bundle must be required.
for (const [file, output] of Object.entries(server.metafile.outputs)) {
  const dynamic = output.imports.filter((imported) => imported.kind === "dynamic-import" && imported.external);
  if (dynamic.length) throw new Error(`${file} imports ${dynamic.map((imported) => imported.path).join(", ")} with import(): require it instead`);
}

const cache = spawnSync(process.execPath, ["scripts/write-code-cache.mjs", "--version"], { encoding: "utf8" });
if (cache.status !== 0) throw new Error(`writing the code cache failed:\n${cache.stdout}${cache.stderr}`);
console.log(`built ${out}/shomei.cjs`);

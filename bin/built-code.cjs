// Loads the built server (dist/shomei.cjs) with V8's code cache (dist/shomei.code-cache).
//
// Why: Node 20 compiles a script's source at every start, and compiling the
// bundle was most of the start-up. V8 can keep the compiled code of a script
// it has run and take it back the next time; Node 20 offers that only to
// scripts compiled with node:vm (its module compile cache came in Node 22),
// and only for scripts, not ES modules, which is why the build is one
// CommonJS bundle. The build runs the bundle once (`shomei --version`) and
// writes the cache (scripts/write-code-cache.mjs). A cache V8 cannot take
// (another Node or V8 version, other V8 flags, another bundle) is refused by
// V8 itself and the bundle compiles from its source as it would without one:
// the same code runs either way, only how it is compiled changes.
//
// CommonJS, as the rest of bin/ (bin/package.json): Node starts a CommonJS
// entry point without its ES module loader, some 12 ms sooner.
"use strict";
const { existsSync, readFileSync } = require("node:fs");
const Module = require("node:module");
const path = require("node:path");
const { Script } = require("node:vm");

/** The bundle and its code cache, as the build writes them under a checkout's root. */
function builtFiles(root) {
  return { bundle: path.join(root, "dist", "shomei.cjs"), codeCache: path.join(root, "dist", "shomei.code-cache") };
}

/**
 * Compiles the bundle as Node compiles a CommonJS module (the same wrapper,
 * so `require`, `module` and `__filename` mean what they mean there), with the
 * code cache when there is one.
 */
function compileBuilt({ bundle, codeCache }, { useCache = true } = {}) {
  const cachedData = useCache && existsSync(codeCache) ? readFileSync(codeCache) : undefined;
  const script = new Script(Module.wrap(readFileSync(bundle, "utf8")), { filename: bundle, cachedData });
  return { script, cacheRejected: cachedData !== undefined && script.cachedDataRejected === true };
}

/** Runs a compiled bundle as the main module would run: it reads its command from process.argv. */
function runCompiled(script, bundle) {
  const module = { exports: {}, filename: bundle, id: ".", loaded: false };
  script.runInThisContext().call(module.exports, module.exports, Module.createRequire(bundle), module, bundle, path.dirname(bundle));
}

/**
 * Runs the built server. With source maps asked for (--enable-source-maps), the bundle is required
 * as Node requires any module, without the code cache: Node 20 maps stack traces only for the
 * modules it loads itself, not for scripts compiled with node:vm.
 */
function runBuilt(files) {
  if (process.sourceMapsEnabled) require(files.bundle);
  else runCompiled(compileBuilt(files).script, files.bundle);
}

module.exports = { builtFiles, compileBuilt, runCompiled, runBuilt };

#!/usr/bin/env node
// Runs the built server (dist/, made by `npm run build`, which `npm ci` runs).
// A missing build, or one older than the sources beside it, stops here with
// what to do, rather than running code that is not what the checkout says.
//
// CommonJS (bin/package.json), as Node starts a CommonJS entry point sooner
// than an ES module one.
"use strict";
const { existsSync, readdirSync, statSync } = require("node:fs");
const path = require("node:path");
const { builtFiles, runBuilt } = require("./built-code.cjs");

const root = path.join(__dirname, "..");
const files = builtFiles(root);

/** The newest modification time of the files under a folder, 0 when it does not exist. */
function newest(folder) {
  if (!existsSync(folder)) return 0;
  let time = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) time = Math.max(time, statSync(path.join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return time;
}

if (!existsSync(files.bundle)) {
  console.error("shomei is not built: run `npm run build` (npm ci does it too)");
  process.exit(1);
}
if (Math.max(newest(path.join(root, "src")), newest(path.join(root, "gen"))) > statSync(files.bundle).mtimeMs) {
  console.error("the build in dist/ is older than the sources: run `npm run build`");
  process.exit(1);
}
// The build's source maps (dist/*.map) lead a stack trace back to src/ when Node is asked to read them,
// with NODE_OPTIONS=--enable-source-maps. Off by default: reading and indexing them as the bundle loads
// took some 30 ms of every start, and without them a trace still names our functions (the build keeps names).
runBuilt(files);

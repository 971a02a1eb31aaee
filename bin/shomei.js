#!/usr/bin/env node
// Runs the built server (dist/, made by `npm run build`, which `npm ci` runs).
// A missing build, or one older than the sources beside it, stops here with
// what to do, rather than running code that is not what the checkout says.
import { existsSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { builtFiles, runBuilt } from "./built-code.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const files = builtFiles(root);
const built = files.bundle;

/** The newest modification time of the files under a folder, 0 when it does not exist. */
function newest(folder) {
  if (!existsSync(folder)) return 0;
  let time = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) time = Math.max(time, statSync(`${entry.parentPath ?? entry.path}/${entry.name}`).mtimeMs);
  }
  return time;
}

if (!existsSync(built)) {
  console.error("shomei is not built: run `npm run build` (npm ci does it too)");
  process.exit(1);
}
if (Math.max(newest(`${root}src`), newest(`${root}gen`)) > statSync(built).mtimeMs) {
  console.error("the build in dist/ is older than the sources: run `npm run build`");
  process.exit(1);
}
// The build's source maps (dist/*.map) lead a stack trace back to src/ when Node is asked to read them,
// with NODE_OPTIONS=--enable-source-maps. Off by default: reading and indexing them as the bundle loads
// took some 30 ms of every start, and without them a trace still names our functions (the build keeps names).
runBuilt(files);

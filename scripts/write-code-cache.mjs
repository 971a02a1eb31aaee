// Writes V8's code cache for the built server (bin/built-code.cjs says why):
// runs the bundle as `shomei --version` does, which loads every module the
// server starts with, then keeps the code V8 compiled for it. Run by
// scripts/build.mjs with the command's arguments: `node scripts/write-code-cache.mjs --version`.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import code from "../bin/built-code.cjs";

const { builtFiles, compileBuilt, runCompiled } = code;

const files = builtFiles(fileURLToPath(new URL("..", import.meta.url)));
const { script } = compileBuilt(files, { useCache: false });
runCompiled(script, files.bundle);
// After the command has run, so the functions it called are compiled too (a cache made right after
// compiling holds only the top level, and saved a third as much at start-up).
process.once("beforeExit", () => writeFileSync(files.codeCache, script.createCachedData()));

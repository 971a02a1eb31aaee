// Entry point of the CRL worker thread. A worker does not inherit the parent's
// TypeScript loader, and on Node 20 `--import tsx` in a Worker's execArgv does
// not take effect, so it registers tsx itself (as bin/shomei.js does) before
// loading the TypeScript body.
import { register } from "tsx/esm/api";

register();
await import("./crl-worker.ts");

// Entry point of the worker threads started by test/support/workers.ts. A worker
// does not inherit the parent's TypeScript loader, and on Node 20 `--import tsx`
// in a Worker's execArgv does not take effect, so it registers tsx itself (as
// bin/shomei.js does) before loading the TypeScript body.
import { register } from "tsx/esm/api";

register();
await import("./storage-worker.ts");

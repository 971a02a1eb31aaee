#!/usr/bin/env node
// Runs the TypeScript sources directly: one less build step between `npm ci` and a running service.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");

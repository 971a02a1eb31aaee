import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Router } from "express";
import { passkeyScript, passkeyScriptPath, webauthnLibraryPath } from "../pages/passkey-script.ts";

let library: Buffer | undefined;

/**
 * The browser bundle of @simplewebauthn/browser as installed (a UMD file
 * that defines SimpleWebAuthnBrowser), read once: the package's entry point
 * is found the way Node finds it, and the bundle lies beside it.
 */
function libraryBundle(): Buffer {
  if (!library) {
    const entry = createRequire(import.meta.url).resolve("@simplewebauthn/browser");
    library = readFileSync(path.join(path.dirname(entry), "..", "dist", "bundle", "index.umd.min.js"));
  }
  return library;
}

export function registerPasskeyAssets(router: Router): void {
  router.get(webauthnLibraryPath, (_req, res) => {
    res.set("Cache-Control", "no-cache").type("text/javascript").send(libraryBundle());
  });
  router.get(passkeyScriptPath, (_req, res) => {
    res.set("Cache-Control", "no-cache").type("text/javascript").send(passkeyScript);
  });
}

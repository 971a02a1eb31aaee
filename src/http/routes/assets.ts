import type { Router } from "express";
import { faviconPath } from "../pages/layout.ts";

/** A seal with a tick, in the pages' accent colour: drawn, so it needs no font. */
const favicon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#2f5fd0"/>
<circle cx="16" cy="16" r="10" fill="none" stroke="#ffffff" stroke-width="2.5"/>
<path d="M11 16.5l3.5 3.5 6.5-7" fill="none" stroke="#ffffff" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round"/>
</svg>
`;

/** The icon every page names, and /favicon.ico for browsers that ask for it anyway (an SVG too). */
export function registerAssetRoutes(router: Router): void {
  for (const path of [faviconPath, "/favicon.ico"]) {
    router.get(path, (_req, res) => {
      res.set("Cache-Control", "public, max-age=86400").type("image/svg+xml").send(favicon);
    });
  }
}

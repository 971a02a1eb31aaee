/**
 * The mock's folders under src: the mock environment and its CA (domain), its store, its RPC service, its
 * routes and pages, and its installation and demo data (app). Any folder under src named mock* is one of them
 * (test/unit/import-graph.test.ts holds that, and that nothing outside them imports them but mockInstaller).
 */
export const mockFolders = ["domain/mock", "domain/mock-ca", "storage/mock", "rpc/mock", "http/mock", "app/mock"] as const;

/** The one file outside them that names the mock: it installs it in mock mode, with import(). */
export const mockInstaller = "app/mode-extensions.ts";

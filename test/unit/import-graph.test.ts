import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, type Dirent } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { mockFolders, mockInstaller } from "../support/mock-folders.ts";

const srcRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src");

/**
 * Every relative import and re-export of every file under src, type-only ones included: a cycle of types is
 * still a cycle. With `loaded: "static"`, only what loading a file loads (no import() calls).
 */
function importGraph(loaded: "static" | "all" = "all", root = srcRoot): Map<string, string[]> {
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).map((f) => path.join(root, f));
  const specifier = /^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gms;
  const dynamic = /\bimport\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g;
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const found = [...text.matchAll(specifier), ...(loaded === "all" ? text.matchAll(dynamic) : [])];
    graph.set(file, found.map((m) => path.resolve(path.dirname(file), m[1]!)));
  }
  return graph;
}

function isMock(root: string, file: string): boolean {
  const relative = path.relative(root, file).split(path.sep).join("/");
  return mockFolders.some((folder) => relative.startsWith(folder + "/"));
}

/** Imports of the mock's code by code outside it, but for the installer's: "from -> to", relative to root. */
function mockImports(root: string, graph: Map<string, string[]>): string[] {
  const name = (file: string) => path.relative(root, file).split(path.sep).join("/");
  return [...graph]
    .filter(([file]) => !isMock(root, file) && name(file) !== mockInstaller)
    .flatMap(([file, targets]) => targets.filter((t) => isMock(root, t)).map((t) => `${name(file)} -> ${name(t)}`))
    .sort();
}

/** Every file a file loads when it is loaded, itself included, following the graph. */
function closure(graph: Map<string, string[]>, start: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const target of graph.get(file) ?? []) visit(target);
  };
  visit(start);
  return seen;
}

/** The strongly connected components with more than one file (Tarjan): each is an import circle. */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(path.relative(srcRoot, w));
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("the import graph of src", () => {
  const graph = importGraph();

  it("reads the imports: every one into src names a file it found, and there are many", () => {
    const inSrc = [...graph].flatMap(([file, targets]) => targets.filter((t) => t.startsWith(srcRoot + path.sep)).map((t) => [file, t] as const));
    expect(inSrc.filter(([, t]) => !graph.has(t)).map(([f, t]) => `${path.relative(srcRoot, f)} -> ${path.relative(srcRoot, t)}`)).toEqual([]);
    expect(inSrc.length).toBeGreaterThan(500);
  });

  it("has no import circles", () => {
    expect(circles(graph)).toEqual([]);
  });

  it("finds a circle when there is one (the check itself works)", () => {
    const a = path.join(srcRoot, "a.ts");
    const b = path.join(srcRoot, "b.ts");
    expect(circles(new Map([[a, [b]], [b, [a]]]))).toEqual([["a.ts", "b.ts"]]);
  });

  it("keeps src/domain free of storage, transports and the composition root", () => {
    const outside = ["storage", "http", "rpc", "server", "app", "cli", "adapters"].map((folder) => path.join(srcRoot, folder) + path.sep);
    const domain = path.join(srcRoot, "domain") + path.sep;
    const offending = [...graph]
      .filter(([file]) => file.startsWith(domain))
      .flatMap(([file, targets]) => targets.filter((t) => outside.some((o) => t.startsWith(o))).map((t) => `${path.relative(srcRoot, file)} -> ${path.relative(srcRoot, t)}`));
    expect(offending).toEqual([]);
  });

  it("keeps I/O out of src/domain: no files, workers, processes or servers, no global fetch", () => {
    const offending = domainIo(srcRoot);
    expect(offending).toEqual([]);
  });

  it("finds I/O in the domain when there is some (the check itself works)", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "shomei-import-graph-"));
    try {
      mkdirSync(path.join(dir, "domain"));
      writeFileSync(path.join(dir, "domain", "reads.ts"), 'import { readFile } from "node:fs/promises";\n');
      writeFileSync(path.join(dir, "domain", "calls.ts"), "export const get = (u: string) => fetch(u);\n");
      writeFileSync(path.join(dir, "domain", "fine.ts"), "class A { private async fetch(u: string) { return this.source.fetch(u); } }\n");
      expect(domainIo(dir)).toEqual(["domain/calls.ts: calls fetch", "domain/reads.ts: imports node:fs/promises"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps the mock to its own folders: nothing outside them imports it, but the one file that installs it", () => {
    expect(mockImports(srcRoot, graph)).toEqual([]);
    // The installer does import it: were it gone, the mock would be installed some other way this test does not see.
    expect(graph.get(path.join(srcRoot, mockInstaller))!.filter((t) => isMock(srcRoot, t)).map((t) => path.relative(srcRoot, t))).not.toEqual([]);
  });

  it("lists every mock folder: a folder under src named mock* is one of mockFolders", () => {
    const folders = (readdirSync(srcRoot, { recursive: true, withFileTypes: true }) as Dirent[])
      .filter((entry) => entry.isDirectory() && /^mock/i.test(entry.name))
      .map((entry) => path.relative(srcRoot, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
      .sort();
    expect(folders).toEqual([...mockFolders].sort());
  });

  it("keeps the demo in the mock: every file under src named demo* is in a mock folder", () => {
    // The demo client's callback page, the demo webhook receiver and the demo data exist only in mock mode: in a
    // mock folder, the rule above keeps every production file from importing them.
    const demo = (readdirSync(srcRoot, { recursive: true }) as string[])
      .filter((f) => f.endsWith(".ts") && /demo/i.test(path.basename(f)))
      .map((f) => path.join(srcRoot, f));
    expect(demo.length).toBeGreaterThan(0);
    expect(demo.filter((file) => !isMock(srcRoot, file)).map((file) => path.relative(srcRoot, file))).toEqual([]);
  });

  it("finds an import of the mock from outside it, static or import(), when there is one (the check itself works)", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "shomei-import-graph-"));
    const write = (name: string, text: string) => {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    };
    try {
      write("http/mock/routes.ts", "export const routes = 1;\n");
      write("app/mock/seed.ts", "export const seed = 1;\n");
      write("http/app.ts", 'import { routes } from "./mock/routes.ts";\nexport const app = routes;\n');
      write("app/compose.ts", 'export const later = () => import("./mock/seed.ts");\n');
      write("app/mock/extension.ts", 'import { routes } from "../../http/mock/routes.ts";\nexport const e = routes;\n');
      write(mockInstaller, 'export const install = () => import("./mock/seed.ts");\n');
      expect(mockImports(dir, importGraph("all", dir))).toEqual(["app/compose.ts -> app/mock/seed.ts", "http/app.ts -> http/mock/routes.ts"]);
      expect(mockImports(dir, importGraph("static", dir))).toEqual(["http/app.ts -> http/mock/routes.ts"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("loads no mock code in production: what the command loads, all but import() calls, holds no file of the mock", () => {
    // src/cli/main.ts is the `shomei` command, `serve --mode production` included; the mock's code arrives only
    // by the installer's import() in mock mode, so the production build runs without it (see
    // test/production-without-mock.test.ts, which builds and runs src without the mock's folders).
    const loaded = [...closure(importGraph("static"), path.join(srcRoot, "cli/main.ts"))];
    expect(loaded.length).toBeGreaterThan(200);
    expect(loaded.filter((file) => isMock(srcRoot, file)).map((file) => path.relative(srcRoot, file))).toEqual([]);
    expect(loaded).toContain(path.join(srcRoot, mockInstaller));
  });

  it("has no second, lean path beside a framework: no file name under src contains \"lean\"", () => {
    // A request path beside Express or Connect (its own parsing, errors and dispatch) was named lean-*; speed comes from within the framework.
    const lean = (readdirSync(srcRoot, { recursive: true }) as string[]).filter((f) => /lean/i.test(path.basename(f))).sort();
    expect(lean).toEqual([]);
  });
});

/** What in <root>/domain does I/O itself: imports of node's I/O modules and calls of the global fetch. */
function domainIo(root: string): string[] {
  const domain = path.join(root, "domain");
  const io = /^\s*(?:import|export)\b[^;]*?\bfrom\s+"(node:(?:fs|fs\/promises|worker_threads|child_process|http|https|http2|dgram))"/gm;
  // A call of fetch that is neither a method (x.fetch) nor a method's declaration (async fetch(…) {).
  const globalFetch = /(?<![\w$.])(?<!(?:async|private|protected|public|static)\s+)fetch\s*\(/;
  const found: string[] = [];
  for (const name of (readdirSync(domain, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).sort()) {
    const text = readFileSync(path.join(domain, name), "utf8");
    const file = path.relative(root, path.join(domain, name));
    for (const m of text.matchAll(io)) found.push(`${file}: imports ${m[1]}`);
    if (globalFetch.test(text)) found.push(`${file}: calls fetch`);
  }
  return found.sort();
}

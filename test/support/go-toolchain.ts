import { execFile } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Where Debian's golang-*-dev packages put their Go source: a GOPATH entry. */
export const debianGopath = "/usr/share/gocode";

/** The Go module in this repository and the import path of its example program. */
export const goModuleDir = path.resolve(import.meta.dirname, "../../clients/go");
export const goModulePath = "shomei.dev/clients/go";

/** The libraries the Go client builds against, and the Debian package of each. */
const libraries: Record<string, string> = {
  "google.golang.org/grpc": "golang-google-grpc-dev",
  "google.golang.org/protobuf": "golang-google-protobuf-dev",
  "google.golang.org/genproto/googleapis/rpc/errdetails": "golang-google-genproto-dev",
};

/** Undefined when the Go client can be built offline, otherwise why not. */
async function probeGo(): Promise<string | undefined> {
  try {
    await run("go", ["version"]);
  } catch (error) {
    return `no Go toolchain (go version: ${(error as Error).message.split("\n")[0]})`;
  }
  const missing = Object.entries(libraries).filter(([importPath]) => !existsSync(path.join(debianGopath, "src", importPath)));
  if (missing.length > 0) return `Go libraries missing under ${debianGopath}: ${missing.map(([, pkg]) => pkg).join(", ")}`;
  return undefined;
}

/**
 * Whether the Go client tests can run: undefined when they can, else the
 * reason they are skipped, printed so the skip is visible. Under CI=true a
 * missing toolchain is a failure, so CI can never pass without having run them.
 */
export async function goUnavailable(): Promise<string | undefined> {
  const reason = await probeGo();
  if (reason && process.env.CI === "true") {
    throw new Error(`${reason}. CI=true requires the Go client tests (scripts/install-system-deps.sh installs the Debian packages).`);
  }
  if (reason) console.warn(`\n  SKIPPING Go client tests: ${reason}\n`);
  return reason;
}

/**
 * The environment of an offline build in GOPATH mode: the module proxy is
 * unreachable here, so the libraries come from Debian's source packages and
 * this repository's module is linked into a scratch GOPATH under its import path.
 */
function gopathEnv(scratchGopath: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // Go's build cache lives under $HOME unless told otherwise; without either, keep one in the temp directory.
    GOCACHE: process.env.GOCACHE ?? (process.env.HOME ? undefined : path.join(tmpdir(), "shomei-go-build-cache")),
    GO111MODULE: "off",
    GOPATH: `${scratchGopath}${path.delimiter}${debianGopath}`,
    GOPROXY: "off",
    GOFLAGS: "",
    GOTOOLCHAIN: "local",
    CGO_ENABLED: "0",
  };
}

/** Builds a package of the Go module (e.g. "example") into dir; returns the binary's path. */
export async function buildGoPackage(dir: string, pkg: string): Promise<string> {
  const scratchGopath = path.join(dir, "gopath");
  const link = path.join(scratchGopath, "src", goModulePath);
  mkdirSync(path.dirname(link), { recursive: true });
  symlinkSync(goModuleDir, link);
  const binary = path.join(dir, path.basename(pkg));
  await run("go", ["build", "-o", binary, `${goModulePath}/${pkg}`], { cwd: dir, env: gopathEnv(scratchGopath) });
  return binary;
}

/** Files gofmt would change under a directory (empty when all are formatted). */
export async function unformattedGoFiles(dir: string): Promise<string[]> {
  const { stdout } = await run("gofmt", ["-l", dir]);
  return stdout.split("\n").filter(Boolean);
}

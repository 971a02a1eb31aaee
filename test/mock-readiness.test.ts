import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { demoClientId, demoLogin, demoPassword } from "../src/domain/mock/demo-names.ts";
import { authorizeUrl, Browser, signIn } from "./support/oidc.ts";

/*
 * `shomei serve` in mock mode, as a script uses it: wait until /readyz says
 * ready, then start the printed flow at once. Readiness must mean the demo
 * client and user exist, not only that the database answers.
 */
const root = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), "shomei-readiness-"));
let child: ChildProcess | undefined;

afterAll(() => {
  child?.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** A port free right now (the script's fixed port; the server must announce nothing before it is ready). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => resolve(port));
    });
  });
}

describe("shomei serve in mock mode", () => {
  it("/readyz answers 200 only once the demo client and user exist", { timeout: 60_000 }, async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ["bin/shomei.js", "serve", "--mode", "mock", "--port", String(port)], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: dir, SHOMEI_DATA_DIR: path.join(dir, "data"), HOST: "127.0.0.1", BASE_URL: base },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exited = new Promise<never>((_, reject) => child!.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${stderr}`))));

    // Poll as a script would, as often as it can: the first 200 is the moment the flow starts.
    const statuses: string[] = [];
    const ready = (async () => {
      for (;;) {
        const reply = await fetch(`${base}/readyz`).catch(() => undefined);
        if (reply) {
          const body = (await reply.json()) as { status: string };
          if (statuses.at(-1) !== body.status) statuses.push(body.status);
          if (reply.status === 200) return;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await Promise.race([ready, exited]);

    // The printed flow: the demo client's request, then the demo user's password.
    const b = new Browser(base);
    const authorize = await b.get(
      authorizeUrl({
        client_id: demoClientId,
        redirect_uri: `${base}/demo/callback`,
        response_type: "code",
        scope: "openid",
        state: "s1",
        code_challenge: "GdmGSxfPo_kyG3zHGwdmVpxCf9hgm2J8na5PZXhtDBM",
        code_challenge_method: "S256",
      }),
    );
    expect(authorize.location ?? `${authorize.status}: ${authorize.body}`).toMatch(/^\/auth\/login\?interaction=/);
    // The built server's Japanese text comes out as written (the build writes it into the bundle as escapes,
    // tagged templates included).
    const inJapanese = await b.get(`${authorize.location}&ui_locales=ja`);
    expect(inJapanese.body).toContain("</strong> を利用するにはログインしてください");
    const signedIn = await signIn(b, authorize, demoLogin, demoPassword);
    expect(signedIn.location ?? `${signedIn.status}: ${signedIn.body}`).toMatch(/^\/auth\/consent\?interaction=/);
    // While it seeded, readiness said so (the database answered all along).
    expect(statuses.at(-1)).toBe("ready");
    expect(statuses.slice(0, -1).every((s) => s === "starting")).toBe(true);
  });
});

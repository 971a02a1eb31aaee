import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { TurnLog } from "../../bench/load/turn-log.ts";
import { runInTurns } from "../../bench/load/turns.ts";
import { runWarmUp } from "../../bench/load/warm-up.ts";
import type { LoadJob } from "../../bench/load/job.ts";

describe("the record of two servers taking turns", () => {
  it("counts each side's running time, the one running now up to the moment asked", () => {
    const log = new TurnLog(0, 1000);
    expect(log.runningSide).toBe(0);
    log.switchTo(1, 1100);
    log.switchTo(0, 1250);
    expect(log.runningMs(0, 1300)).toBe(150);
    expect(log.runningMs(1, 1300)).toBe(150);
    log.switchTo(0, 1280); // already running: nothing changes
    log.end(1400);
    expect(log.runningSide).toBeUndefined();
    expect(log.runningMs(0, 5000)).toBe(250);
    expect(log.runningMs(1, 5000)).toBe(150);
  });

  it("leaves out of a request's latency the time its server was stopped", () => {
    const log = new TurnLog(0, 0);
    log.switchTo(1, 100);
    log.switchTo(0, 200);
    log.switchTo(1, 300);
    // Side 0, a request from 90 to 210: stopped from 100 to 200.
    expect(log.stoppedWithin(0, 90, 210)).toBe(100);
    // Side 1, the same request: stopped 90-100 and 200-210.
    expect(log.stoppedWithin(1, 90, 210)).toBe(20);
    // Within one running stretch: nothing to leave out.
    expect(log.stoppedWithin(0, 210, 290)).toBe(0);
    // Side 0 is stopped from 300 on, while it lasts.
    expect(log.stoppedWithin(0, 250, 420)).toBe(120);
    // Before the log began the server was running as usual.
    expect(log.stoppedWithin(1, -50, 50)).toBe(50);
  });
});

/**
 * A server that works 1 ms on every request (at most 1,000 answers a second,
 * however fast the machine), then answers with a small JSON body.
 */
const serverScript = `require("node:http").createServer((q, r) => { q.resume(); q.on("end", () => { const until = performance.now() + 1; while (performance.now() < until); r.end('{"ok":true}'); }); }).listen(0, "127.0.0.1", function () { console.log(this.address().port); });`;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

async function startServer(script = serverScript): Promise<{ pid: number; url: string }> {
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  const port = await new Promise<string>((resolve) => child.stdout!.once("data", (chunk: Buffer) => resolve(chunk.toString().trim())));
  return { pid: child.pid!, url: `http://127.0.0.1:${port}/` };
}

/** The state letter /proc gives a process: T while stopped. */
const state = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[0];

const job = (url: string, seconds: number): LoadJob => ({ protocol: "http1", name: url, url, method: "POST", bodies: ["{}"], seconds, connections: 16 });

describe("two servers taking turns under load", () => {
  it("gives each its own seconds of turns, counts its answers over them, leaves the stopped time out of latency, and resumes both", async () => {
    const [a, b] = await Promise.all([startServer(), startServer()]);
    const started = performance.now();
    const [first, second] = await runInTurns({ jobs: [job(a.url, 1.8), job(b.url, 1.8)], pids: [a.pid, b.pid], first: 0, turnMs: 600, withPostgres: false, settleMs: 0 });
    const wall = (performance.now() - started) / 1000;
    for (const side of [first, second]) {
      expect(side.failed).toBe(0);
      expect(side.ok).toBeGreaterThan(0);
      // Its own turns, not the round's wall time (a late timer may lengthen the last turn).
      expect(side.seconds).toBeGreaterThanOrEqual(1.8);
      expect(side.seconds).toBeLessThan(2.3);
      expect(side.rate).toBeCloseTo(side.ok / side.seconds, 6);
      // Every stop holds the 16 requests in flight for 600 ms, 2.7 % or more of a turn's 600 at most: counted whole, p99
      // would be 600 or more. Three quarters of a turn leave room for a machine busy with other work.
      expect(side.p99).toBeLessThan(450);
      expect(side.cpuMs).toBeGreaterThanOrEqual(0);
      expect(side.databaseCpuMs).toBeNaN();
    }
    // One ran while the other waited: the round lasts both sides' turns.
    expect(wall).toBeGreaterThanOrEqual(3.55);
    expect(state(a.pid)).not.toBe("T");
    expect(state(b.pid)).not.toBe("T");
  });

  it("leaves each side's settling turns out of its answers, seconds and latency", async () => {
    // Its first 30 answers take 40 ms of work each (1.2 s), every later one 1 ms: with 16 requests in flight, most slow
    // answers wait 300 ms or more, a later one about 16. Settling for 2.5 s of turns leaves room for a busy machine,
    // where the 1.2 s of work take longer.
    const slowStart = serverScript.replace("performance.now() + 1;", "performance.now() + (++globalThis.n > 30 ? 1 : 40);").replace("require(", "globalThis.n = 0; require(");
    const [a, b] = await Promise.all([startServer(slowStart), startServer(slowStart)]);
    const started = performance.now();
    const settled = await runInTurns({ jobs: [job(a.url, 1), job(b.url, 1)], pids: [a.pid, b.pid], first: 1, turnMs: 200, withPostgres: false, settleMs: 2500 });
    const wall = (performance.now() - started) / 1000;
    for (const side of settled) {
      expect(side.failed).toBe(0);
      expect(side.ok).toBeGreaterThan(0);
      // Counted: the second after the settling 2.5 s (a late timer may lengthen a turn).
      expect(side.seconds).toBeGreaterThanOrEqual(1);
      expect(side.seconds).toBeLessThan(1.4);
      expect(side.p99).toBeLessThan(300);
    }
    expect(wall).toBeGreaterThanOrEqual(6.95);
    // The same start counted from the first turn: the slow answers are in it.
    const [c, d] = await Promise.all([startServer(slowStart), startServer(slowStart)]);
    const unsettled = await runInTurns({ jobs: [job(c.url, 1), job(d.url, 1)], pids: [c.pid, d.pid], first: 1, turnMs: 200, withPostgres: false, settleMs: 0 });
    for (const side of unsettled) expect(side.p99).toBeGreaterThanOrEqual(300);
  });

  it("fails with the process it could not stop, and leaves the other running", async () => {
    const a = await startServer();
    await expect(runInTurns({ jobs: [job(a.url, 0.2), job(a.url, 0.2)], pids: [a.pid, 2 ** 30], first: 0, turnMs: 50, withPostgres: false, settleMs: 0 })).rejects.toThrow(
      `could not stop server process ${2 ** 30}`,
    );
    expect(state(a.pid)).not.toBe("T");
  });

  it("refuses two sides on one process", async () => {
    await expect(runInTurns({ jobs: [job("http://127.0.0.1:1/", 0.1), job("http://127.0.0.1:1/", 0.1)], pids: [process.pid, process.pid], first: 0, turnMs: 50, withPostgres: false, settleMs: 0 })).rejects.toThrow(
      "two sides on one process cannot take turns",
    );
  });
});

describe("a warm-up", () => {
  it("lasts until its server's CPU per answer stops falling, and no longer", async () => {
    // CPU work, not a wait, so that a busy machine does not change what an answer costs: PBKDF2 of 25,000 rounds for
    // the first answer, 120 fewer for each later one, down to 1,000 from the 200th on. A cost that keeps falling, as a
    // JIT's does, so that however slowly a busy machine serves the first 200 answers no stretch of them looks level;
    // and twenty-five times the level at the start, so that the first slice stands far above it even where a busy
    // machine blurs which slice an answer is counted in, or lifts a late one.
    const slowStart = `globalThis.n = 0; const { pbkdf2Sync } = require("node:crypto"); require("node:http").createServer((q, r) => { q.resume(); q.on("end", () => { pbkdf2Sync("p", "s", Math.max(1000, 25000 - 120 * globalThis.n++), 32, "sha256"); r.end('{"ok":true}'); }); }).listen(0, "127.0.0.1", function () { console.log(this.address().port); });`;
    const server = await startServer(slowStart);
    const warm = await runWarmUp({ job: job(server.url, 12), pid: server.pid, sliceMs: 200, minSeconds: 0, maxSeconds: 12 });
    expect(warm.failed).toBe(0);
    // The level: the median of the last five slices, so that one slice slowed by other work does not set it.
    const lastFive = warm.cpuUsPerAnswer.slice(-5).sort((x, y) => x - y);
    const [first, level] = [warm.cpuUsPerAnswer[0]!, lastFive[Math.floor(lastFive.length / 2)]!];
    // Past the slow answers, then level for its last six slices (one may hold the change), well before the longest it
    // may last. Counted in answers and slices, not seconds: how long 200 slow answers take depends on the machine.
    expect(first).toBeGreaterThan(3 * level);
    expect(warm.ok).toBeGreaterThan(200);
    const levelAtEnd = warm.cpuUsPerAnswer.length - 1 - warm.cpuUsPerAnswer.findLastIndex((cpu) => cpu >= 2 * level);
    expect(levelAtEnd).toBeGreaterThanOrEqual(5);
    expect(warm.seconds).toBeLessThan(11);
  }, 20_000);

  it("lasts its minimum on a server steady from the start, and while it stands well above another process's level", async () => {
    const steady = `const { pbkdf2Sync } = require("node:crypto"); require("node:http").createServer((q, r) => { q.resume(); q.on("end", () => { pbkdf2Sync("p", "s", 1000, 32, "sha256"); r.end('{"ok":true}'); }); }).listen(0, "127.0.0.1", function () { console.log(this.address().port); });`;
    const server = await startServer(steady);
    const plain = await runWarmUp({ job: job(server.url, 3), pid: server.pid, sliceMs: 200, minSeconds: 0, maxSeconds: 3 });
    const held = await runWarmUp({ job: job(server.url, 6), pid: server.pid, sliceMs: 200, minSeconds: 4, maxSeconds: 6 });
    const level = plain.cpuUsPerAnswer.at(-1)!;
    const behind = await runWarmUp({ job: job(server.url, 3), pid: server.pid, sliceMs: 200, minSeconds: 0, maxSeconds: 3, reference: level / 10 });
    // How soon a steady server's warm-up may end depends on the machine's noise; that it does not end sooner does not.
    expect(held.seconds).toBeGreaterThanOrEqual(4);
    expect(behind.seconds).toBeGreaterThanOrEqual(3);
  }, 30_000);
});

import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { loadCpus, moveToLoadCpus, onEveryCpu, onServerCpu, pinning, serverCpus } from "../../bench/cpus.ts";

/** The CPUs every thread of a process may run on, as the kernel lists them. */
function allowedCpus(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).map((thread) => /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/task/${thread}/status`, "utf8"))![1]!);
}

/** A process with a worker thread besides its own: pinning must reach every thread. */
const workerScript = "const { Worker } = require('node:worker_threads'); new Worker('setInterval(() => {}, 1000)', { eval: true }); setInterval(() => {}, 1000); console.log('up')";
const everyCpu = availableParallelism() === 1 ? "0" : `0-${availableParallelism() - 1}`;
const children: number[] = [];
afterEach(() => {
  for (const pid of children.splice(0)) process.kill(pid, "SIGKILL");
});

describe("where the benchmark's processes run", () => {
  it("pins on a machine of two CPUs or more with taskset, and nowhere else", () => {
    const tasksetThere = spawnSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" }).status === 0;
    expect(pinning).toBe(process.env.BENCH_PIN !== "0" && availableParallelism() >= 2 && tasksetThere);
    // The machines this project runs on have two CPUs and util-linux: the bench pins there.
    if (process.env.CI === "true") expect(pinning).toBe(true);
  });

  it.runIf(pinning)("starts a server on the last CPU alone, every thread of it, under the pid it was given", async () => {
    const [command, args] = onServerCpu(process.execPath, ["-e", workerScript]);
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
    children.push(child.pid!);
    await new Promise((resolve) => child.stdout!.once("data", resolve));
    expect(serverCpus).toBe(String(availableParallelism() - 1));
    expect(readFileSync(`/proc/${child.pid}/comm`, "utf8").trim()).toBe("node");
    const threads = allowedCpus(child.pid!);
    expect(threads.length).toBeGreaterThan(1);
    expect(new Set(threads)).toEqual(new Set([serverCpus]));
  });

  it.runIf(pinning)("moves a running process, all its threads, off the servers' CPU", async () => {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000); console.log('up')"], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(child.pid!);
    await new Promise((resolve) => child.stdout!.once("data", resolve));
    expect(new Set(allowedCpus(child.pid!))).toEqual(new Set([everyCpu]));
    moveToLoadCpus(child.pid!);
    const moved = new Set(allowedCpus(child.pid!));
    expect(moved).toEqual(new Set([loadCpus]));
    expect(moved.has(serverCpus)).toBe(false);
  });

  it.runIf(pinning)("gives back every CPU to what is not measured under load", async () => {
    const [command, args] = onEveryCpu("sleep", ["30"]);
    const child = spawn(command, args, { stdio: "ignore" });
    children.push(child.pid!);
    // taskset sets the mask and then execs sleep: wait for the exec.
    for (let i = 0; i < 200 && readFileSync(`/proc/${child.pid}/comm`, "utf8").trim() !== "sleep"; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(allowedCpus(child.pid!)).toEqual([everyCpu]);
  });

  it("leaves commands as they are and processes where they run with BENCH_PIN=0", () => {
    const script = `import("./bench/cpus.ts").then((m) => { m.moveToLoadCpus(process.pid); console.log(JSON.stringify([m.pinning, m.onServerCpu("node", ["a.js"]), m.onEveryCpu("node", ["a.js"]), m.pinningLine()])); })`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "-e", script], { env: { ...process.env, BENCH_PIN: "0" }, encoding: "utf8" });
    expect(run.stderr).toBe("");
    const [pinned, server, every, line] = JSON.parse(run.stdout) as [boolean, unknown, unknown, string];
    expect(pinned).toBe(false);
    expect(server).toEqual(["node", ["a.js"]]);
    expect(every).toEqual(["node", ["a.js"]]);
    expect(line).toContain("not pinned");
    expect(line).toContain("BENCH_PIN=0");
  });
});

/**
 * Which CPUs each process of a run may use. On a small machine the load
 * generator and the measured server otherwise share every core, and how the
 * kernel happens to split them between the two moves a round's throughput by
 * tens of per cent (measured: the per-round ratio of a check varied by 19 %
 * unpinned, 8 % pinned). So the measured servers (shomei and its peers) run on
 * the last CPU and the load generator and the benchmark itself on the others:
 * each side of a comparison gets the same one core, whatever the other does.
 * PostgreSQL is not the run's to place and stays where it is.
 *
 * Pinning uses taskset (util-linux, on every Debian); with fewer than two
 * CPUs, without taskset, or with BENCH_PIN=0 nothing is pinned and the run
 * says so.
 */
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";

const cpuCount = availableParallelism();

function tasksetWorks(): boolean {
  return spawnSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" }).status === 0;
}

/** Whether this run pins its processes (decided once). */
export const pinning = process.env.BENCH_PIN !== "0" && cpuCount >= 2 && tasksetWorks();

/** The CPU list (taskset's syntax) of the measured servers, and of everything else. */
export const serverCpus = String(cpuCount - 1);
export const loadCpus = cpuCount > 2 ? `0-${cpuCount - 2}` : "0";

/** A command and its arguments so that the process it starts runs on `cpus` (taskset execs it: same pid); as given when not pinning. */
function on(cpus: string, command: string, args: readonly string[]): [string, string[]] {
  return pinning ? ["taskset", ["-c", cpus, command, ...args]] : [command, [...args]];
}

/** A command that runs on the servers' CPU. */
export function onServerCpu(command: string, args: readonly string[]): [string, string[]] {
  return on(serverCpus, command, args);
}

/**
 * A command that may use every CPU again (taskset execs it): for what the run
 * starts after it moved itself to the load's CPUs but does not load, such as
 * the start-up measurement, which times a server as an operator starts it.
 */
export function onEveryCpu(command: string, args: readonly string[]): [string, string[]] {
  return on(`0-${cpuCount - 1}`, command, args);
}

/** Moves a running process, every thread of it, to the load's CPUs. */
export function moveToLoadCpus(pid: number): void {
  if (!pinning) return;
  const result = spawnSync("taskset", ["-a", "-p", "-c", loadCpus, String(pid)], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`taskset could not move process ${pid}: ${result.stderr}`);
}

/** One line for the run's header. */
export function pinningLine(): string {
  if (pinning) return `servers on CPU ${serverCpus}, the load generator and the benchmark on CPU ${loadCpus} (BENCH_PIN=0: unpinned)`;
  return `processes not pinned to CPUs (${cpuCount} CPU${cpuCount === 1 ? "" : "s"}${process.env.BENCH_PIN === "0" ? ", BENCH_PIN=0" : ""})`;
}

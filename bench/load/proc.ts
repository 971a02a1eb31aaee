/**
 * What /proc says of a process: its CPU time and resident memory, and the CPU
 * time of PostgreSQL's processes. Read by the benchmark and by the load
 * generator (which splits a round's PostgreSQL time between the sides at
 * their turns).
 */
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks a second of /proc/<pid>/stat's times: 100 on every Linux this runs on (USER_HZ). */
const ticksPerSecond = 100;

/** User and system CPU time of a process so far, in ms, or NaN when /proc does not say. */
export function cpuTimeMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces: the fields after it start past its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return Number.NaN;
  }
}

/** CPU time so far of every PostgreSQL server process on the machine, in ms, by process id. */
export function postgresCpuTimes(): Map<number, number> {
  const times = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "postgres") continue;
    } catch {
      continue;
    }
    const ms = cpuTimeMs(Number(entry));
    if (Number.isFinite(ms)) times.set(Number(entry), ms);
  }
  return times;
}

/**
 * PostgreSQL's CPU time between two readings of postgresCpuTimes (the run's
 * database work: the bench's PostgreSQL serves nothing else while it runs):
 * what each process spent since the first reading, or since it started. A
 * backend whose connection closed meanwhile is not counted; subtracting
 * totals instead would take its whole life's time off the interval.
 */
export function postgresCpuSpentMs(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** VmRSS of a process in MB, or NaN when /proc does not say (not Linux, or the process is gone). */
export function residentMb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

// Where a benchmark's machine time goes: CPU seconds per group of processes, read from Linux /proc
// (utime + stime, in clock ticks of 10 ms) at the start and the end of a phase.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** CPU seconds a process has used so far (null: gone). */
export function cpuSecondsOf(pid: number): number | null {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}

/** Pids `pgrep` finds with these arguments (`['-x', 'postgres']`, `['-f', 'kafka.Kafka']`). */
export function pidsOf(args: string[]): number[] {
  try {
    return execFileSync('pgrep', args).toString().trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** CPU seconds the whole machine has been busy so far (every core; /proc/stat, idle and iowait excluded). */
export function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return (f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] ?? 0)) / 100;
}

/**
 * Starts measuring: each group lists its pids at the start and at the end (processes started
 * meanwhile count whole; processes that ended meanwhile are lost). `stop()` gives CPU seconds per group and the machine's busy CPU seconds (all processes).
 */
export function cpuMeter(groups: Record<string, () => number[]>) {
  const take = () =>
    Object.fromEntries(Object.entries(groups).map(([g, list]) => [g, new Map(list().map((pid) => [pid, cpuSecondsOf(pid) ?? 0]))]));
  const start = take();
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  return {
    stop() {
      const seconds = (performance.now() - t0) / 1000;
      const machineBusy = machineBusySeconds() - busy0;
      const used = Object.fromEntries(
        Object.entries(take()).map(([g, m]) => [g, [...m].reduce((s, [pid, c]) => s + c - (start[g].get(pid) ?? 0), 0)]),
      );
      return { seconds, cores: availableParallelism(), used, machineBusy };
    },
  };
}

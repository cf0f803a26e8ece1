// Where a benchmark's machine time goes: CPU seconds per group of processes, read from Linux /proc
// (utime + stime, in clock ticks of 10 ms) at the start and the end of a phase.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** CPU seconds a process has used so far, in user mode and in the kernel (null: gone). */
export function cpuSplitOf(pid: number): { user: number; kernel: number } | null {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { user: Number(f[11]) / 100, kernel: Number(f[12]) / 100 };
  } catch {
    return null;
  }
}

/** CPU seconds a process has used so far (null: gone). */
export function cpuSecondsOf(pid: number): number | null {
  const s = cpuSplitOf(pid);
  return s && s.user + s.kernel;
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
 * meanwhile count whole; processes that ended meanwhile are lost). `stop()` gives CPU seconds per group, the
 * part of them spent in the kernel (system calls: sockets, disk; a V8 profile cannot tell it from a
 * thread waiting for a core, since it samples on wall time), and the machine's busy CPU seconds (all
 * processes).
 */
export function cpuMeter(groups: Record<string, () => number[]>) {
  const take = () =>
    Object.fromEntries(
      Object.entries(groups).map(([g, list]) => [g, new Map(list().map((pid) => [pid, cpuSplitOf(pid) ?? { user: 0, kernel: 0 }]))]),
    );
  const start = take();
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  return {
    stop() {
      const seconds = (performance.now() - t0) / 1000;
      const machineBusy = machineBusySeconds() - busy0;
      const end = Object.entries(take());
      const sum = (part: (c: { user: number; kernel: number }) => number) =>
        Object.fromEntries(
          end.map(([g, m]) => [g, [...m].reduce((s, [pid, c]) => s + part(c) - part(start[g].get(pid) ?? { user: 0, kernel: 0 }), 0)]),
        );
      const used = sum((c) => c.user + c.kernel);
      const kernel = sum((c) => c.kernel);
      return { seconds, cores: availableParallelism(), used, kernel, machineBusy };
    },
  };
}

/** Per group, the share of its CPU spent in the kernel, in % (groups that used none left out). */
export function kernelShares(m: { used: Record<string, number>; kernel: Record<string, number> }): Record<string, number> {
  return Object.fromEntries(Object.entries(m.used).flatMap(([g, u]) => (u > 0 ? [[g, Math.round((100 * m.kernel[g]) / u)]] : [])));
}

/** `nodes 18%, postgres 30%` */
export const sharesText = (shares: Record<string, number>) =>
  Object.entries(shares)
    .map(([g, v]) => `${g} ${v}%`)
    .join(', ');

/**
 * PERF_MARKS=1: a measured window's edge on stderr (`perf-mark <edge> <seconds> <label>`) in
 * CLOCK_MONOTONIC seconds, the clock of `perf record -k CLOCK_MONOTONIC`, so that a machine-wide
 * profile can be cut to one row of a bench (`perf script --time <start>,<end>`).
 */
export function perfMark(label: string, edge: 'start' | 'end'): void {
  if (process.env.PERF_MARKS) console.error(`perf-mark ${edge} ${(Number(process.hrtime.bigint()) / 1e9).toFixed(6)} ${label}`);
}

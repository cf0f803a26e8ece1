// Child processes that die with the process that started them. A bench or test that crashes
// (an uncaught error, process.exit) would otherwise leave its service nodes running: they keep
// reconnecting to a database that was dropped and load the machine for every later measurement.
import type { ChildProcess } from 'node:child_process';

const children = new Set<ChildProcess>();
let hooked = false;

/** Kills `child` (SIGKILL) when this process exits, however it exits short of SIGKILL. */
export function ownChild(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    });
  }
  return child;
}

/** SIGINT, SIGTERM and SIGHUP end this process through `exit` (and so kill its own children). */
export function exitOnSignals(): void {
  for (const [signal, n] of [
    ['SIGINT', 2],
    ['SIGTERM', 15],
    ['SIGHUP', 1],
  ] as const)
    process.once(signal, () => process.exit(128 + n));
}

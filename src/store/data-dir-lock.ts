// PGlite is single-process: one node owns an embedded data directory at a time. The owner holds a
// lock file beside the directory (`<dir>.lock`, holding its pid), taken before anything touches the
// data (the local chain's reset, migrations) and removed at close. A second opener is refused at
// once with a clear message; a lock left by a process that is gone (kill -9) is taken over.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export class DataDirBusy extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `the embedded database ${dir} is in use by process ${pid} (PGlite allows one process; stop it, or give this one DATA_DIR or DATABASE_URL)`,
    );
  }
}

export interface DataDirLock {
  path: string;
  release(): void;
}

const alive = (pid: number) => {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e: any) {
    return e?.code === 'EPERM';
  }
};

/** Takes `<dir>.lock` for this process, or throws DataDirBusy naming the live owner. */
export function lockDataDir(dir: string): DataDirLock {
  const path = `${resolve(dir)}.lock`;
  mkdirSync(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (e: any) {
      if (e?.code !== 'EEXIST') throw e;
      let owner = NaN;
      try {
        owner = Number(readFileSync(path, 'utf8').trim());
      } catch {
        /* removed meanwhile: try again */
      }
      if (owner === process.pid) throw new DataDirBusy(dir, owner); // opened twice in one process
      if (alive(owner)) throw new DataDirBusy(dir, owner);
      rmSync(path, { force: true }); // its owner is gone: a stale lock
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    let released = false;
    return {
      path,
      release() {
        if (released) return;
        released = true;
        try {
          if (Number(readFileSync(path, 'utf8').trim()) === process.pid) rmSync(path, { force: true });
        } catch {
          /* gone already */
        }
      },
    };
  }
  throw new Error(`could not take the lock ${path}`);
}

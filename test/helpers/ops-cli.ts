// Runs the ops CLI (src/cli/ops.ts) as its own process, as an operator would.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface OpsRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

export interface OpsProcess {
  child: ChildProcess;
  stderr(): string;
  done: Promise<OpsRun>;
}

export function startOps(args: string[], env: Record<string, string | undefined>): OpsProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ops.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    stdout += d;
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const done = new Promise<OpsRun>((resolve) =>
    child.on('exit', (code) => {
      let json: any = null;
      try {
        json = JSON.parse(stdout.trim().split('\n').pop() ?? '');
      } catch {
        /* not JSON */
      }
      resolve({ code, stdout, stderr, json });
    }),
  );
  return { child, stderr: () => stderr, done };
}

export function runOps(args: string[], env: Record<string, string | undefined>): Promise<OpsRun> {
  return startOps(args, env).done;
}

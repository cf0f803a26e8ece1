// A service node as its own OS process (`src/main.ts`), so that a test can SIGKILL it.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { createServer } from 'node:net';
import { ownChild } from './children.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const handed = new Set<number>();

/** Whether a server can listen on `port` on loopback right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * A free port below the kernel's ephemeral range (32768–60999 on Linux): a node killed and
 * started again on its port (the chaos run) could find one from `listen(0)` taken meanwhile by
 * some process's outgoing connection, which the kernel numbers from that range ("port … is already
 * in use", seen with other suites running beside the chaos run). Random, so that tests running at
 * once rarely try the same one; each is checked by listening on it.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handed.has(port) || !(await canListen(port))) continue;
    handed.add(port); // never handed twice by one process (two calls before either listens)
    return port;
  }
  throw new Error('no free port found in 20000–31999');
}

export interface ProcessNode {
  url: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function startProcessNode(env: Record<string, string>, timeoutMs = 60_000): Promise<ProcessNode> {
  const port = await freePort();
  const child = ownChild(
    spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: root,
      env: {
        ...process.env,
        APP_ENV: 'development',
        HOST: '127.0.0.1',
        PORT: String(port),
        LOCAL_CHAIN: '0',
        LOG_LEVEL: 'warn',
        CLOB_JWT_SECRET: 'test-clob-secret',
        CLOB_INTERNAL_TOKEN: 'internal-secret',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  let dead = false;
  exited.then(() => {
    dead = true;
  });
  while (true) {
    if (dead) throw new Error(`node exited during start:\n${out}`);
    try {
      if ((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) })).ok) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`node did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return {
    url,
    child,
    exited,
    output: () => out,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      // A node stops on SIGTERM within its own 15 s; past 20 s it is killed, so no teardown waits forever.
      const late = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(late);
    },
  };
}

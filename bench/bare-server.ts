// Starts one of the floor benches' bare servers (`bench/*-floor-server.ts`) as its own process and
// waits until it listens on `PORT`.
import { spawn, type ChildProcess } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;

export async function startBareServer(script: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      if (String(d).includes('listening')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`${script} exited ${code}`)));
  });
  return child;
}

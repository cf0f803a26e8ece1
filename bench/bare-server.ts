// Starts one of the floor benches' bare servers (`bench/*-floor-server.ts`) as its own process and
// waits until it listens on `PORT`. FLOOR_NODE_OPTIONS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`) are
// passed to its node, as SERVICE_NODE_OPTIONS are to the service's.
import { spawn, type ChildProcess } from 'node:child_process';
import { ownChild } from '../test/helpers/children.ts';

const root = new URL('..', import.meta.url).pathname;

export async function startBareServer(script: string, env: Record<string, string>): Promise<ChildProcess> {
  const flags = process.env.FLOOR_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [];
  const child = ownChild(
    spawn(process.execPath, [...flags, '--import', 'tsx', script], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      if (String(d).includes('listening')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`${script} exited ${code}`)));
  });
  return child;
}

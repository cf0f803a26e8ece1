// The open-loop load generator (bench/open-loop.ts) in a process of its own. In the bench's process
// its timing shares one event loop with whatever else the bench runs there: the local chain, which
// executes every settlement transaction of the service in that same process, and the bench's own
// garbage. A stall of the generator's loop is counted as the service's latency, since a request's
// latency runs from when it was due. On bench/order-ratio.ts's half-rate run (3 nodes, the
// generator in the bench's process), a 250 ms window about 5 s in held 18 and 39 requests over
// 50 ms in two runs, the windows around it 0–3; without crossing orders (no trade to settle) no
// such window.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ownChild } from '../test/helpers/children.ts';
import type { OpenLoopResult } from './open-loop.ts';

const root = new URL('..', import.meta.url).pathname;

export interface OpenLoopOptions {
  port: number | number[];
  requests: Buffer[];
  rate: number;
  seconds: number;
  connections: number;
  /** Seconds run first at the same rate and not counted: the first `rate × warmupSeconds` requests. */
  warmupSeconds?: number;
}

/** Writes `requests` length-prefixed (uint32 big-endian) into one buffer. */
export function packRequests(requests: Buffer[]): Buffer {
  const out = Buffer.allocUnsafe(requests.reduce((n, r) => n + 4 + r.length, 0));
  let at = 0;
  for (const r of requests) {
    at = out.writeUInt32BE(r.length, at);
    at += r.copy(out, at);
  }
  return out;
}

export function unpackRequests(b: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < b.length;) {
    const n = b.readUInt32BE(at);
    out.push(b.subarray(at + 4, at + 4 + n));
    at += 4 + n;
  }
  return out;
}

/** bench/open-loop.ts's `openLoop`, run by bench/open-loop-child.ts in its own node process. */
export async function openLoopInProcess(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const dir = mkdtempSync(join(tmpdir(), 'open-loop-'));
  try {
    writeFileSync(join(dir, 'requests.bin'), packRequests(o.requests));
    const { requests: _, ...rest } = o;
    writeFileSync(join(dir, 'options.json'), JSON.stringify(rest));
    const child = ownChild(
      spawn(process.execPath, ['--import', 'tsx', 'bench/open-loop-child.ts', dir], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] }),
    );
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    if (code !== 0) throw new Error(`bench/open-loop-child.ts exited ${code}`);
    return JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')) as OpenLoopResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

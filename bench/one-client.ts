// One client, one request at a time, back to back, on one raw keep-alive socket: pre-serialised
// requests, responses framed by Content-Length (as bench/open-loop.ts). What a lone trader's
// latency is made of on the service's side; `fetch` (undici) in the bench process adds about half a
// millisecond of its own per request on this machine (one client, embedded: p50 3.4 → 4.0 ms).
import net from 'node:net';
import { responseIn } from './open-loop.ts';

export interface OneClientResult {
  /** Milliseconds per request, from its write to its response's last byte. */
  latencies: number[];
  /** Answers by status code. */
  statuses: Map<number, number>;
}

export async function oneClient(port: number, requests: Buffer[]): Promise<OneClientResult> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let buf: Buffer = Buffer.alloc(0);
  let answered: ((status: number) => void) | null = null;
  let failed: ((e: Error) => void) | null = null;
  socket.on('data', (d: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    const r = responseIn(buf);
    if (!r) return;
    buf = r.rest;
    answered?.(r.status);
  });
  socket.on('error', (e) => failed?.(e));
  socket.on('close', () => failed?.(new Error('the server closed the connection')));
  try {
    for (const r of requests) {
      const t0 = performance.now();
      const status = await new Promise<number>((resolve, reject) => {
        answered = resolve;
        failed = reject;
        socket.write(r);
      });
      latencies.push(performance.now() - t0);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  } finally {
    failed = null;
    socket.destroy();
  }
  return { latencies, statuses };
}

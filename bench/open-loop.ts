// An open-loop HTTP/1.1 load generator light enough not to be the thing measured: requests are
// pre-serialised bytes written on raw keep-alive sockets, responses are framed by Content-Length
// only, and each request's latency runs from the time it was due (a stall shows up in the
// percentiles instead of slowing the generator down: no coordinated omission). Each connection
// carries one request at a time, as a browser or API client would.
import net from 'node:net';

export interface OpenLoopResult {
  latencies: number[];
  /** When each of `latencies`' requests was due, ms after the start. */
  dueMs: number[];
  /** When the run started (milliseconds since the epoch): `dueMs` are from here. */
  startedAt: number;
  /** Which request each of `latencies` was: its index in `requests`. */
  index: number[];
  errors: number;
  non2xx: number;
  seconds: number;
}

interface Conn {
  socket: net.Socket;
  busy: boolean;
  buf: Buffer;
  due: number;
  index: number;
}

/** The first whole response in `buf` (framed by Content-Length): its status and the bytes after it; null until it is all there. */
export function responseIn(buf: Buffer): { status: number; rest: Buffer } | null {
  const head = buf.indexOf('\r\n\r\n');
  if (head < 0) return null;
  const header = buf.subarray(0, head).toString('latin1');
  const m = /\r\ncontent-length:\s*(\d+)/i.exec(header);
  const len = m ? Number(m[1]) : 0;
  if (buf.length < head + 4 + len) return null;
  return { status: Number(header.slice(9, 12)), rest: buf.subarray(head + 4 + len) };
}

/**
 * Sends `rate` requests per second for `seconds`, request i being `requests[i % requests.length]`.
 * With several ports (the nodes of a cluster), connection i goes to `port[i % port.length]`, as a
 * load balancer would spread clients.
 */
export async function openLoop(o: {
  port: number | number[];
  requests: Buffer[];
  rate: number;
  seconds: number;
  connections: number;
}): Promise<OpenLoopResult> {
  const total = Math.round(o.rate * o.seconds);
  const latencies: number[] = [];
  const dueMs: number[] = [];
  const index: number[] = [];
  let errors = 0;
  let non2xx = 0;
  let done = 0;
  let sent = 0;
  const waiting: number[] = []; // due times of requests with no free connection yet
  let finish!: () => void;
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const t0 = performance.now();

  const complete = (c: Conn, ok: boolean, status: number) => {
    if (!ok) errors++;
    else if (status < 200 || status > 299) non2xx++;
    else {
      latencies.push(performance.now() - c.due);
      dueMs.push(c.due - t0);
      index.push(c.index);
    }
    c.busy = false;
    if (++done === total) finish();
    else if (waiting.length) dispatch(c, waiting.shift()!);
    else idle.push(c);
  };

  const ports = Array.isArray(o.port) ? o.port : [o.port];
  const conns: Conn[] = await Promise.all(
    Array.from(
      { length: o.connections },
      (_, i) =>
        new Promise<Conn>((resolve, reject) => {
          const socket = net.connect(ports[i % ports.length], '127.0.0.1');
          socket.setNoDelay(true);
          const c: Conn = { socket, busy: false, buf: Buffer.alloc(0), due: 0, index: 0 };
          socket.once('connect', () => resolve(c));
          socket.once('error', reject);
          socket.on('data', (d: Buffer) => {
            c.buf = c.buf.length ? Buffer.concat([c.buf, d]) : d;
            const r = responseIn(c.buf);
            if (!r) return;
            c.buf = r.rest;
            complete(c, true, r.status);
          });
        }),
    ),
  );
  for (const c of conns)
    c.socket.on('error', () => {
      if (c.busy) complete(c, false, 0);
    });

  const idle = [...conns];
  let next = 0;
  function dispatch(c: Conn, due: number) {
    c.busy = true;
    c.due = due;
    c.index = next++ % o.requests.length;
    c.socket.write(o.requests[c.index]);
  }
  const tick = () => {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - t0) / 1000) * o.rate) + 1);
    for (; sent < due; sent++) {
      const at = t0 + (sent / o.rate) * 1000;
      const c = idle.pop();
      if (c) dispatch(c, at);
      else waiting.push(at);
    }
    if (sent < total) setTimeout(tick, 1);
  };
  tick();
  await finished;
  const seconds = (performance.now() - t0) / 1000;
  for (const c of conns) c.socket.destroy();
  return { latencies, dueMs, startedAt: performance.timeOrigin + t0, index, errors, non2xx, seconds };
}

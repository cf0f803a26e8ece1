// Answers sent straight to the asking node over TCP instead of through its reply topic. On Kafka an
// answer to another node's ask was a produce to the broker and a fetch back by the asker: two
// requests on the broker, two wake-ups, and 2–5 ms of a single order's 8–11 ms. An asker that runs
// a ReplyServer names it in its asks (the `reply-via` header); the worker that answers writes the
// reply record's text to that node down a connection it keeps (DirectLinks), else, while the
// connection is not up, or when the server refused it, produces the record to the reply topic as
// before. Nothing else changes: the asker reads the same text and matches it by correlation id.
//
// The wire: the client opens with one hello frame, JSON `{ v: 1, topic, mac }` where `mac` is
// HMAC-SHA256(secret, topic) in hex; the server answers one byte, 1 (it reads that reply topic)
// or 0 (it does not: another node, or a wrong secret), then closes on 0. Every frame after is a
// reply record's text: a 4-byte big-endian length, then that many bytes of UTF-8. A frame longer
// than MAX_FRAME_BYTES, a hello that is not valid, or no hello within HELLO_TIMEOUT_MS closes the
// connection; the server itself never stops for it.
//
// What a lost connection costs: an answer written just before a connection broke may be lost with
// it. Its command is committed (the worker answers after the commit); its asker times out, and the
// client's retry finds what the first attempt did (the same id). Kafka's reply topic kept such an
// answer; the direct path trades that for one hop less on every answer.
import { createHmac, timingSafeEqual } from 'node:crypto';
import net from 'node:net';

/** The header an asker names its ReplyServer in (`host:port`). */
export const REPLY_VIA = 'reply-via';

/** A frame longer than this closes the connection (a reply record is cut at 256 K characters). */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024;
const MAX_HELLO_BYTES = 4096;
const HELLO_TIMEOUT_MS = 5_000;
/** After a refused or broken connection, the route goes through the reply topic this long before trying again. */
const RETRY_MS = 5_000;
/** A connection with this much unsent data takes no more: answers go through the reply topic meanwhile. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
/** Connections a reply server holds at once (each node keeps one per asker it answers; a stranger's lasts 5 s). */
const MAX_CONNECTIONS = 1_024;
/** Past this many routes, those that are down are dropped when a new one opens. */
const MAX_LINKS = 1_000;

const macOf = (secret: string, topic: string) => createHmac('sha256', secret).update(topic).digest();

/** Frames: a 4-byte big-endian length, then the bytes. */
function frame(text: string): Buffer {
  const body = Buffer.from(text, 'utf8');
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

export interface ReplyServerOptions {
  /** Address to listen on (default 127.0.0.1) and port (default 0: any free one). */
  host?: string;
  port?: number;
  /** What the server is named as in asks: `host:port` (default: the host listened on and the port bound). */
  advertise?: string;
  secret: string;
}

/** The asker's side: receives reply records for the topics it was given. */
export class ReplyServer {
  private server: net.Server | null = null;
  private sockets = new Set<net.Socket>();
  /** `host:port` that workers reach this server at. */
  address = '';

  constructor(
    private o: ReplyServerOptions,
    private receivers: (topic: string) => ((value: string) => void) | undefined,
  ) {}

  async start(): Promise<string> {
    const server = net.createServer((s) => this.accept(s));
    server.maxConnections = MAX_CONNECTIONS;
    server.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port ?? 0, this.o.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const port = (server.address() as net.AddressInfo).port;
    const host = this.o.host && this.o.host !== '0.0.0.0' && this.o.host !== '::' ? this.o.host : '127.0.0.1';
    this.address = this.o.advertise ?? `${host}:${port}`;
    return this.address;
  }

  private accept(s: net.Socket): void {
    this.sockets.add(s);
    s.setNoDelay(true);
    s.on('error', () => undefined);
    s.on('close', () => this.sockets.delete(s));
    let receive: ((value: string) => void) | null = null;
    let buf: Buffer = Buffer.alloc(0);
    const hello = setTimeout(() => s.destroy(), HELLO_TIMEOUT_MS);
    s.on('data', (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      while (buf.length >= 4) {
        const n = buf.readUInt32BE(0);
        if (n > (receive ? MAX_FRAME_BYTES : MAX_HELLO_BYTES)) return void s.destroy();
        if (buf.length < 4 + n) return;
        const text = buf.toString('utf8', 4, 4 + n);
        buf = buf.subarray(4 + n);
        if (receive) {
          receive(text);
          continue;
        }
        clearTimeout(hello);
        receive = this.hello(text);
        if (!receive) {
          s.removeAllListeners('data');
          s.on('data', () => undefined);
          s.end(Buffer.from([0]));
          return;
        }
        s.write(Buffer.from([1]));
      }
    });
  }

  /** The receiver a valid hello names, else null. */
  private hello(text: string): ((value: string) => void) | null {
    let h: any;
    try {
      h = JSON.parse(text);
    } catch {
      return null;
    }
    if (h?.v !== 1 || typeof h.topic !== 'string' || typeof h.mac !== 'string' || !/^[0-9a-f]{64}$/.test(h.mac)) return null;
    if (!timingSafeEqual(Buffer.from(h.mac, 'hex'), macOf(this.o.secret, h.topic))) return null;
    return this.receivers(h.topic) ?? null;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }
}

interface Link {
  state: 'connecting' | 'up' | 'down';
  socket: net.Socket | null;
  /** When a down link may be tried again. */
  retryAt: number;
}

/** The worker's side: one connection per (asker's server, reply topic), opened when first needed. */
export class DirectLinks {
  private links = new Map<string, Link>();
  private closed = false;
  /** Reply records to askers that named a server: written to it, or sent through their reply topic instead. */
  readonly counts = { direct: 0, topic: 0 };

  constructor(private secret: string) {}

  /**
   * Writes the reply records to `topic`'s asker at `via` when its connection is up, and says so;
   * false: the caller sends them through the reply topic (the connection is being opened, was
   * refused or broke lately, or has too much unsent).
   */
  trySend(via: string, topic: string, values: string[]): boolean {
    const sent = this.write(via, topic, values);
    this.counts[sent ? 'direct' : 'topic'] += values.length;
    return sent;
  }

  private write(via: string, topic: string, values: string[]): boolean {
    if (this.closed) return false;
    const id = `${via}|${topic}`;
    const link = this.links.get(id);
    if (!link || (link.state === 'down' && Date.now() >= link.retryAt)) {
      this.open(id, via, topic);
      return false;
    }
    const s = link.socket;
    if (link.state !== 'up' || !s || s.writableLength > MAX_BUFFERED_BYTES) return false;
    s.cork();
    for (const v of values) s.write(frame(v));
    process.nextTick(() => s.uncork());
    return true;
  }

  private open(id: string, via: string, topic: string): void {
    // Routes to askers gone for good (a restarted node listens on another port) are forgotten.
    if (this.links.size >= MAX_LINKS) for (const [k, l] of this.links) if (l.state === 'down') this.links.delete(k);
    const at = via.lastIndexOf(':');
    const port = Number(via.slice(at + 1));
    const link: Link = { state: 'connecting', socket: null, retryAt: 0 };
    this.links.set(id, link);
    const down = () => {
      if (link.state === 'down') return;
      link.state = 'down';
      link.retryAt = Date.now() + RETRY_MS;
      link.socket?.destroy();
      link.socket = null;
    };
    if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) return down();
    const s = net.connect({ host: via.slice(0, at), port });
    link.socket = s;
    s.setNoDelay(true);
    s.on('error', down);
    s.on('close', down);
    s.setTimeout(HELLO_TIMEOUT_MS, () => {
      if (link.state !== 'up') down();
    });
    s.once('connect', () => s.write(frame(JSON.stringify({ v: 1, topic, mac: macOf(this.secret, topic).toString('hex') }))));
    s.once('data', (b: Buffer) => {
      if (b[0] !== 1 || this.closed) return down();
      s.setTimeout(0);
      link.state = 'up';
      // The server sends nothing after its answer; anything more is not ours to read.
      s.on('data', () => undefined);
    });
  }

  close(): void {
    this.closed = true;
    for (const l of this.links.values()) l.socket?.destroy();
    this.links.clear();
  }
}

/** The links of each bus connection (a node's): the workers on that bus answer through them. */
const linksOf = new WeakMap<object, DirectLinks>();

export function useDirectLinks(bus: object, links: DirectLinks): () => void {
  linksOf.set(bus, links);
  return () => {
    if (linksOf.get(bus) === links) linksOf.delete(bus);
    links.close();
  };
}

export function directLinksOf(bus: object): DirectLinks | undefined {
  return linksOf.get(bus);
}

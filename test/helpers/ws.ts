// A WebSocket test client of the node's channels (docs/ws.md): collects every message, waits for
// predicates, and keeps the books a subscriber builds from `book` and `price_change` messages.
import { connect as tcp } from 'node:net';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';

export type Level = { price: string; size: string };

export class WsClient {
  readonly messages: any[] = [];
  closeCode: number | null = null;
  closeReason = '';
  private waiters: (() => void)[] = [];
  /** asset id → the book built from the messages */
  readonly books = new Map<string, { bids: Map<string, string>; asks: Map<string, string> }>();
  /** market → last seq applied; every non-book message must follow it by one */
  readonly seqs = new Map<string, number>();
  readonly problems: string[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      const text = String(d);
      const m = text === 'PONG' ? { event_type: 'PONG' } : JSON.parse(text);
      this.messages.push(m);
      this.apply(m);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = String(reason);
      this.wake();
    });
    ws.on('error', () => undefined);
  }

  static open(url: string, path: string, headers: Record<string, string> = {}): Promise<WsClient> {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + path, { headers });
    const c = new WsClient(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(c));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  send(v: unknown): void {
    this.ws.send(typeof v === 'string' ? v : JSON.stringify(v));
  }

  private wake() {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolves with the first message (from index `from`) matching, or rejects after `ms`. */
  async until<T = any>(pred: (m: any) => boolean, ms = 30_000, from = 0): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.messages.slice(from).find(pred);
      if (hit) return hit;
      if (this.closeCode !== null) throw new Error(`closed ${this.closeCode} ${this.closeReason} before the message came`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no such message in ${ms} ms; got ${JSON.stringify(this.messages.slice(-5))}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Resolves once the socket closed (its code), or rejects after `ms`. */
  async closed(ms = 30_000): Promise<number> {
    const deadline = Date.now() + ms;
    while (this.closeCode === null) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`still open after ${ms} ms`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    return this.closeCode;
  }

  private apply(m: any) {
    if (m.event_type === 'book') {
      const toMap = (l: Level[]) => new Map(l.map((x) => [x.price, x.size]));
      this.books.set(m.asset_id, { bids: toMap(m.bids), asks: toMap(m.asks) });
      const prev = this.seqs.get(m.market);
      if (prev === undefined || m.seq !== prev) this.seqs.set(m.market, m.seq);
      return;
    }
    if (!['price_change', 'last_trade_price', 'tick_size_change'].includes(m.event_type)) return;
    const prev = this.seqs.get(m.market);
    if (prev !== undefined && m.seq !== prev + 1) this.problems.push(`market ${m.market}: seq ${m.seq} after ${prev}`);
    this.seqs.set(m.market, m.seq);
    if (m.event_type !== 'price_change') return;
    for (const c of m.price_changes) {
      const b = this.books.get(c.asset_id);
      if (!b) continue;
      const side = c.side === 'BUY' ? b.bids : b.asks;
      if (c.size === '0') side.delete(c.price);
      else side.set(c.price, c.size);
    }
  }

  /** The book of an asset as GET /v1/book lists it. */
  view(asset: string): { bids: Level[]; asks: Level[] } {
    const b = this.books.get(asset);
    if (!b) return { bids: [], asks: [] };
    const list = (m: Map<string, string>, desc: boolean) =>
      [...m]
        .map(([price, size]) => ({ price, size }))
        .sort((x, y) => (desc ? Number(y.price) - Number(x.price) : Number(x.price) - Number(y.price)));
    return { bids: list(b.bids, true), asks: list(b.asks, false) };
  }

  /** Continues from another client's books and seqs (a reconnect that resumes). */
  adopt(other: WsClient): void {
    for (const [a, b] of other.books) this.books.set(a, { bids: new Map(b.bids), asks: new Map(b.asks) });
    for (const [m, n] of other.seqs) this.seqs.set(m, n);
  }

  terminate(): void {
    this.ws.terminate();
  }
  close(): void {
    this.ws.close();
  }
}

/** A raw TCP client that upgrades, then writes masked text frames and never reads (a stalled consumer). */
export function rawSocket(
  url: string,
  path: string,
): Promise<{ frame(text: string): boolean; destroy(): void; socket: import('node:net').Socket }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = tcp(Number(u.port), u.hostname, () => {
      s.write(
        `GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      // Read only the upgrade answer, then stop reading for good.
      s.once('data', (d) => {
        s.pause();
        if (!String(d).startsWith('HTTP/1.1 101')) {
          reject(new Error(`upgrade: ${String(d).split('\r\n')[0]}`));
          return;
        }
        resolve({
          socket: s,
          destroy: () => s.destroy(),
          frame: (text: string) => {
            const payload = Buffer.from(text);
            const mask = randomBytes(4);
            const len = payload.length;
            const head = len < 126 ? Buffer.from([0x81, 0x80 | len]) : Buffer.from([0x81, 0x80 | 126, len >> 8, len & 255]);
            const body = Buffer.alloc(len);
            for (let i = 0; i < len; i++) body[i] = payload[i] ^ mask[i % 4];
            return s.write(Buffer.concat([head, mask, body]));
          },
        });
      });
    });
    s.on('error', reject);
  });
}

// WebSocket channels on the node's HTTP port (docs/ws.md): `GET /ws/market` (public) and
// `GET /ws/user` (order-book bearer) upgrade here; Koa keeps every other request. Connections per
// address are bounded before the upgrade; each connection's frames, rate, send buffer and
// liveness by src/ws/connection.ts.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket from 'ws';
import type { MarketFeed } from '../clob/market-feed.ts';
import type { ClobTokens } from '../clob/sign-in.ts';
import { CLOSE, Connection, type WsLimits } from './connection.ts';
import { MarketChannel, UserChannel } from './channels.ts';

export interface WsServerOptions {
  feed: MarketFeed;
  tokens: ClobTokens;
  limits: WsLimits;
  trustProxy: boolean;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void; error(o: object, m?: string): void };
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n${JSON.stringify({ error: status === 429 ? 'rate_limited' : 'not_found', message: text })}`,
  );
  setTimeout(() => socket.destroy(), 1000).unref();
}

export class WsServer {
  private wss: WebSocket.Server;
  private conns = new Set<Connection>();
  private perIp = new Map<string, number>();
  private timer: NodeJS.Timeout;
  /** Connections dropped, by close code (tests, metrics). */
  readonly dropped = new Map<number, number>();
  /** Messages sent since start, by channel (metrics). */
  readonly sent = { market: 0, user: 0 };

  constructor(private o: WsServerOptions) {
    this.wss = new WebSocket.Server({
      noServer: true,
      maxPayload: o.limits.maxPayloadBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
    this.timer = setInterval(() => this.heartbeat(), Math.max(50, Math.min(o.limits.pingMs, o.limits.idleTimeoutMs / 3)));
    this.timer.unref();
  }

  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
  }

  /** Open connections (tests, metrics). */
  get size(): number {
    return this.conns.size;
  }

  /** Open connections by channel (metrics). */
  byChannel(): Record<'market' | 'user', number> {
    const out = { market: 0, user: 0 };
    for (const c of this.conns) out[c.kind]++;
    return out;
  }

  private ipOf(req: IncomingMessage): string {
    const fwd = this.o.trustProxy
      ? String(req.headers['x-forwarded-for'] ?? '')
          .split(',')[0]
          .trim()
      : '';
    return fwd || req.socket.remoteAddress || 'unknown';
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/ws/market' && path !== '/ws/user') {
      refuse(socket, 404, 'Not Found');
      return;
    }
    const ip = this.ipOf(req);
    const n = this.perIp.get(ip) ?? 0;
    if (n >= this.o.limits.maxConnectionsPerIp) {
      refuse(socket, 429, 'Too Many Requests');
      return;
    }
    this.perIp.set(ip, n + 1);
    socket.on('error', () => undefined);
    let counted = true;
    const uncount = () => {
      if (!counted) return;
      counted = false;
      const left = (this.perIp.get(ip) ?? 1) - 1;
      if (left > 0) this.perIp.set(ip, left);
      else this.perIp.delete(ip);
    };
    socket.once('close', uncount);
    this.wss.handleUpgrade(req, socket as import('node:net').Socket, head, (ws) =>
      this.open(ws, ip, path === '/ws/user' ? 'user' : 'market', req),
    );
  }

  private open(ws: WebSocket, ip: string, kind: 'market' | 'user', req: IncomingMessage): void {
    let channel: MarketChannel | UserChannel;
    const c = new Connection(
      ws,
      ip,
      kind,
      this.sent,
      this.o.limits,
      (_c, code) => this.dropped.set(code, (this.dropped.get(code) ?? 0) + 1),
      this.o.log,
    );
    this.conns.add(c);
    if (kind === 'market') channel = new MarketChannel(c, this.o.feed, this.o.limits);
    else {
      const u = new UserChannel(c, this.o.feed, this.o.tokens, this.o.limits.idleTimeoutMs);
      channel = u;
      const h = req.headers.authorization;
      if (h) u.auth(/^Bearer\s+(.+)$/i.exec(h)?.[1]?.slice(0, 4096));
    }
    const seen = () => {
      c.lastSeen = Date.now();
    };
    ws.on('pong', seen);
    ws.on('message', (data) => {
      seen();
      if (c.closed || !c.take()) return;
      if (typeof data !== 'string') {
        c.drop(CLOSE.unsupported, 'binary frames are not supported: send JSON text');
        return;
      }
      if (data === 'PING') {
        c.deliver('PONG');
        return;
      }
      channel.onFrame(data);
    });
    ws.on('error', () => undefined); // oversized (1009) or invalid frames: ws itself closes with the code
    ws.on('close', () => {
      c.closed = true;
      this.conns.delete(c);
      channel.close();
    });
  }

  /** Pings every connection; terminates those silent past the idle timeout. */
  private heartbeat(): void {
    const now = Date.now();
    for (const c of this.conns) {
      if (now - c.lastSeen > this.o.limits.idleTimeoutMs) {
        this.dropped.set(4408, (this.dropped.get(4408) ?? 0) + 1);
        c.closed = true;
        c.ws.terminate();
        continue;
      }
      try {
        c.ws.ping();
      } catch {
        /* closing */
      }
    }
  }

  /** Closes every connection (1001, the node stops). */
  close(): void {
    clearInterval(this.timer);
    for (const c of this.conns) c.drop(CLOSE.goingAway, 'the node is stopping');
    for (const c of this.conns) c.ws.terminate();
    this.wss.close();
  }
}

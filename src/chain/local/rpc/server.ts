// HTTP JSON-RPC 2.0 endpoint (single and batch calls) with WebSocket subscriptions on the same port
// and, as a validator does, on port + 1 (web3.js's Connection derives its ws URL that way).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Chain } from '../chain.ts';
import { createMethods, type RpcMethod } from './methods.ts';
import { RpcError, RPC_INTERNAL_ERROR, RPC_INVALID_REQUEST, RPC_METHOD_NOT_FOUND, RPC_PARSE_ERROR } from './rpc-error.ts';
import { PubSub } from './subscriptions.ts';
import { acceptWebSocket, type WsConnection } from './websocket.ts';

interface Call {
  jsonrpc?: string;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

const MAX_BODY = 50 * 1024 * 1024;

export class RpcServer {
  readonly methods: Record<string, RpcMethod>;
  readonly pubsub: PubSub;
  private readonly servers: http.Server[] = [];
  private readonly upgraded = new Set<Duplex>();
  private readonly conns = new Set<WsConnection>();
  private readonly held = new Set<http.ServerResponse>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** count of calls per method, for tests */
  readonly calls = new Map<string, number>();

  constructor(private readonly chain: Chain) {
    this.methods = createMethods(chain);
    this.pubsub = new PubSub(chain);
  }

  private newServer(rpc: boolean): http.Server {
    const server = http.createServer((req, res) => {
      if (!rpc) {
        res.writeHead(426).end('WebSocket only');
        return;
      }
      this.handle(req, res);
    });
    server.on('upgrade', (req, socket) => {
      this.upgraded.add(socket);
      socket.on('close', () => this.upgraded.delete(socket));
      const conn = acceptWebSocket(req, socket);
      if (!conn) return;
      this.conns.add(conn);
      conn.onClose(() => this.conns.delete(conn));
      this.pubsub.attach(conn);
    });
    server.keepAliveTimeout = 5000;
    this.servers.push(server);
    return server;
  }

  private static listenOn(server: http.Server, port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve((server.address() as AddressInfo).port);
      });
    });
  }

  /** Listens on `port` (0 = a free port whose successor is free too, for the ws endpoint). */
  async listen(port: number, host: string): Promise<{ port: number; wsPort: number }> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const main = this.newServer(true);
      const bound = await RpcServer.listenOn(main, port, host);
      const ws = this.newServer(false);
      try {
        await RpcServer.listenOn(ws, bound + 1, host);
        return { port: bound, wsPort: bound + 1 };
      } catch {
        this.servers.splice(this.servers.indexOf(ws), 1);
        if (port !== 0) return { port: bound, wsPort: bound };
        await new Promise<void>((r) => main.close(() => r()));
        this.servers.splice(this.servers.indexOf(main), 1);
      }
    }
    throw new Error('no free pair of ports for the local chain');
  }

  /** Cuts every WebSocket connection at once (no close frame), as a network failure would; the endpoint stays up. */
  dropWebSockets(): void {
    for (const s of this.upgraded) s.destroy();
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    for (const res of this.held) res.destroy();
    for (const c of this.conns) c.close();
    if (this.upgraded.size > 0) await new Promise((r) => setTimeout(r, 20));
    for (const s of this.upgraded) s.destroy();
    await Promise.all(
      this.servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (req.method === 'GET') {
      res.writeHead(req.url === '/health' ? 200 : 404, { 'Content-Type': 'text/plain' }).end(req.url === '/health' ? 'ok' : 'not found');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => this.respond(Buffer.concat(chunks).toString('utf8'), res));
  }

  private send(res: http.ServerResponse, body: unknown): void {
    if (res.destroyed) return;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  }

  private respond(text: string, res: http.ServerResponse): void {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      this.send(res, { jsonrpc: '2.0', error: { code: RPC_PARSE_ERROR, message: 'Parse error' }, id: null });
      return;
    }
    const batch = Array.isArray(body);
    const calls = (batch ? body : [body]) as Call[];
    if (calls.length === 0) {
      this.send(res, { jsonrpc: '2.0', error: { code: RPC_INVALID_REQUEST, message: 'Invalid request' }, id: null });
      return;
    }
    const faults = calls.map((c) => this.chain.faults.takeRpc(typeof c?.method === 'string' ? c.method : ''));
    const hang = faults.find((f) => f?.kind === 'hang');
    const http = faults.find((f) => f?.kind === 'error' && f.httpStatus);
    if (http && http.kind === 'error') {
      res.writeHead(http.httpStatus!, { 'Content-Type': 'text/plain' }).end(http.message);
      return;
    }
    const answer = () => {
      const out = calls.map((c, i) => {
        const f = faults[i];
        if (f?.kind === 'error') return { jsonrpc: '2.0', error: { code: f.code, message: f.message }, id: c?.id ?? null };
        return this.call(c);
      });
      this.send(res, batch ? out : out[0]);
    };
    if (hang && hang.kind === 'hang') {
      if (hang.ms === undefined) {
        this.held.add(res);
        res.on('close', () => this.held.delete(res));
        return;
      }
      const t = setTimeout(() => {
        this.timers.delete(t);
        answer();
      }, hang.ms);
      this.timers.add(t);
      return;
    }
    answer();
  }

  private call(c: Call): object {
    const id = c?.id ?? null;
    if (!c || typeof c !== 'object' || typeof c.method !== 'string') {
      return { jsonrpc: '2.0', error: { code: RPC_INVALID_REQUEST, message: 'Invalid request' }, id };
    }
    this.calls.set(c.method, (this.calls.get(c.method) ?? 0) + 1);
    const method = this.methods[c.method];
    if (!method) return { jsonrpc: '2.0', error: { code: RPC_METHOD_NOT_FOUND, message: 'Method not found' }, id };
    try {
      const params = Array.isArray(c.params) ? c.params : c.params === undefined ? [] : [c.params];
      return { jsonrpc: '2.0', result: method(params), id };
    } catch (e) {
      const err = e instanceof RpcError ? e : new RpcError(RPC_INTERNAL_ERROR, `Internal error: ${(e as Error).message}`);
      return { jsonrpc: '2.0', error: err.toJSON(), id };
    }
  }
}

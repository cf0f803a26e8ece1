// A minimal fetch for @solana/web3.js's JSON-RPC client: node:http(s) with the keep-alive agent
// web3.js hands over. The global fetch (undici, WHATWG streams) cost more CPU than the RPC call it
// carried on the order path, where every order reads its wallet's balance.
//
// Keep-alive has a known race: the server closes an idle connection just as the client reuses it,
// and the request fails with ECONNRESET ("socket hang up") without the server having read it. Such a
// failure, and only on a reused connection, is retried once on a fresh one (Node's documented
// remedy, `request.reusedSocket`). Every JSON-RPC call the service makes may be sent twice: reads
// are reads, and a signed transaction sent again is the same transaction (one signature, landing
// once). A request that gets no answer within the timeout fails instead of hanging its caller.
import http from 'node:http';
import https from 'node:https';

export interface LiteResponse {
  ok: boolean;
  status: number;
  statusText: string;
  text(): Promise<string>;
  json(): Promise<unknown>;
}
export interface LiteInit {
  method?: string;
  body?: string;
  headers?: Record<string, string>;
  agent?: http.Agent;
}

/** How long one RPC request may go without a byte moving before it fails. */
export const RPC_TIMEOUT_MS = 15_000;
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

export function nodeFetch(url: string | URL, init: LiteInit = {}, timeoutMs = RPC_TIMEOUT_MS): Promise<LiteResponse> {
  const u = typeof url === 'string' ? new URL(url) : url;
  const body = init.body === undefined ? undefined : Buffer.from(init.body, 'utf8');
  return send(u, init, body, timeoutMs, true);
}

function send(u: URL, init: LiteInit, body: Buffer | undefined, timeoutMs: number, mayRetry: boolean): Promise<LiteResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...init.headers, ...(body ? { 'Content-Length': String(body.length) } : {}) };
    const lib = u.protocol === 'https:' ? https : http;
    let answered = false;
    const req = lib.request(u, { method: init.method ?? 'GET', headers, agent: init.agent }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        resolve({
          ok: status >= 200 && status < 300,
          status,
          statusText: res.statusMessage ?? '',
          text: async () => text,
          json: async () => JSON.parse(text),
        });
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer from ${u.host} within ${timeoutMs} ms`)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (mayRetry && !answered && req.reusedSocket && STALE_CONNECTION.has(e.code ?? '')) resolve(send(u, init, body, timeoutMs, false));
      else reject(e);
    });
    req.end(body);
  });
}

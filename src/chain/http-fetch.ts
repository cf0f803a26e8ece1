// A minimal fetch for @solana/web3.js's JSON-RPC client: node:http(s) with the keep-alive agent
// web3.js hands over. The global fetch (undici, WHATWG streams) cost more CPU than the RPC call it
// carried on the order path, where every order reads its wallet's balance.
import http from 'node:http';
import https from 'node:https';

export interface LiteResponse { ok: boolean; status: number; statusText: string; text(): Promise<string>; json(): Promise<unknown> }

export function nodeFetch(url: string | URL, init: { method?: string; body?: string; headers?: Record<string, string>; agent?: http.Agent } = {}): Promise<LiteResponse> {
  return new Promise((resolve, reject) => {
    const u = typeof url === 'string' ? new URL(url) : url;
    const body = init.body === undefined ? undefined : Buffer.from(init.body, 'utf8');
    const headers = { ...init.headers, ...(body ? { 'Content-Length': String(body.length) } : {}) };
    const lib = u.protocol === 'https:' ? https : http;
    const req = lib.request(u, { method: init.method ?? 'GET', headers, agent: init.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        resolve({ ok: status >= 200 && status < 300, status, statusText: res.statusMessage ?? '', text: async () => text, json: async () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

// The RPC client's fetch (src/chain/http-fetch.ts) on a real HTTP server and a keep-alive agent:
// a request that meets a connection the server just closed is sent again once on a fresh one;
// any other failure is the caller's, and a silent server fails the request after its timeout.
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Connection } from '@solana/web3.js';
import { nodeFetch } from '../../../src/chain/http-fetch.ts';

/** A server answering `{"n": k}` whose handler may instead drop the connection, as keep-alive expiry does. */
async function server(drop: (req: number, onReusedConnection: boolean) => boolean) {
  let requests = 0;
  let connections = 0;
  const s = http.createServer((req, res) => {
    const n = ++requests;
    const reused = (req.socket as any).served === true;
    (req.socket as any).served = true;
    req.resume();
    req.on('end', () => {
      if (drop(n, reused)) {
        req.socket.destroy();
        return;
      }
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { n } }));
    });
  });
  s.keepAliveTimeout = 60_000;
  s.on('connection', () => {
    connections++;
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}/`;
  return {
    url,
    stats: () => ({ requests, connections }),
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

const post = (url: string, agent: http.Agent) =>
  nodeFetch(url, { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' }, agent });

test('a request on a kept-alive connection the server dropped is sent again, once, on a new connection', async (t) => {
  // The second request, the first on a reused connection, finds it dropped.
  const srv = await server((n, reused) => reused && n === 2);
  t.teardown(srv.close);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  t.deepEqual(await (await post(srv.url, agent)).json(), { jsonrpc: '2.0', id: 1, result: { n: 1 } });
  const second = await post(srv.url, agent);
  t.true(second.ok);
  t.deepEqual(await second.json(), { jsonrpc: '2.0', id: 1, result: { n: 3 } });
  t.deepEqual(srv.stats(), { requests: 3, connections: 2 });
});

test('a dropped fresh connection, or a second drop, is not retried: the caller gets the error', async (t) => {
  const fresh = await server(() => true);
  t.teardown(fresh.close);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const e1 = await t.throwsAsync(post(fresh.url, agent));
  t.is((e1 as NodeJS.ErrnoException).code, 'ECONNRESET');
  t.deepEqual(fresh.stats(), { requests: 1, connections: 1 });

  // Served once, then every later request dropped: one retry, then the error.
  const flaky = await server((n) => n > 1);
  t.teardown(flaky.close);
  await post(flaky.url, agent);
  const e2 = await t.throwsAsync(post(flaky.url, agent));
  t.is((e2 as NodeJS.ErrnoException).code, 'ECONNRESET');
  t.deepEqual(flaky.stats(), { requests: 3, connections: 2 });
});

test('a server that never answers fails the request after the timeout', async (t) => {
  const s = http.createServer(() => {
    /* never answers */
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  const started = Date.now();
  const e = await t.throwsAsync(nodeFetch(`http://127.0.0.1:${(s.address() as AddressInfo).port}/`, { method: 'POST', body: '{}' }, 300));
  t.regex(e!.message, /no answer from 127\.0\.0\.1:\d+ within 300 ms/);
  t.true(Date.now() - started >= 290);
});

test('web3.js through this fetch: a JSON-RPC call survives the dropped kept-alive connection', async (t) => {
  const srv = await server((n, reused) => reused && n === 2);
  t.teardown(srv.close);
  const conn = new Connection(srv.url, { commitment: 'confirmed', disableRetryOnRateLimit: true, fetch: nodeFetch as any });
  const slot = async () => (await (conn as any)._rpcRequest('getSlot', [])).result.n as number;
  t.is(await slot(), 1);
  t.is(await slot(), 3, 'the second call, dropped on its kept-alive connection, was answered on a new one');
  t.is(srv.stats().requests, 3);
});

// Rate limits of the order book and sign-in (issue 19): per client IP and per wallet, 429 with
// Retry-After, limits from the settings; and TRUST_PROXY=1, under which X-Forwarded-For is the IP
// and X-Forwarded-Host the links' host. The buckets' memory is bounded.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import { testNode, token } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { signIn } from '../../../src/clob/sign-in.ts';
import { RateLimiter } from '../../../src/http/rate-limit.ts';
import type { ServiceNode } from '../../../src/node.ts';

let node: ServiceNode;
test.before(async () => {
  node = await testNode({
    TRUST_PROXY: '1',
    RATE_LIMIT_SIGNIN_PER_SEC: '0.5',
    RATE_LIMIT_SIGNIN_BURST: '3',
    RATE_LIMIT_WALLET_PER_SEC: '0.5',
    RATE_LIMIT_WALLET_BURST: '4',
    RATE_LIMIT_IP_PER_SEC: '0.5',
    RATE_LIMIT_IP_BURST: '12',
  });
});
test.after.always(async () => {
  await node?.close();
});

async function send(method: string, path: string, o: { ip: string; token?: string; body?: unknown; headers?: Record<string, string> }) {
  const headers: Record<string, string> = { 'x-forwarded-for': o.ip, ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(node.url + path, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as any };
}

const signInFrom = (ip: string, kp = Keypair.generate()) =>
  send('POST', '/v1/auth/token', { ip, body: signIn(kp.publicKey.toBase58(), kp.secretKey) });

test.serial('sign-in: per IP, 429 rate_limited with Retry-After past the burst; another IP is not limited', async (t) => {
  for (let i = 0; i < 3; i++) t.is((await signInFrom('10.0.0.1')).status, 200);
  const limited = await signInFrom('10.0.0.1');
  t.is(limited.status, 429);
  t.is(limited.body.error, 'rate_limited');
  t.regex(limited.body.message, /too many requests/);
  t.is(limited.retryAfter, '2');
  t.is((await signInFrom('10.0.0.2')).status, 200);
});

test.serial('bearer routes: per wallet, whatever the IP; POST /v1/order answers in its own rejection shape', async (t) => {
  const kp = Keypair.generate();
  const tok = (await signInFrom('10.0.1.1', kp)).body.access_token;
  for (let i = 0; i < 4; i++) t.is((await send('GET', '/v1/orders', { ip: `10.0.1.${10 + i}`, token: tok })).status, 200);
  const limited = await send('GET', '/v1/orders', { ip: '10.0.1.99', token: tok });
  t.is(limited.status, 429);
  t.is(limited.body.error, 'rate_limited');
  t.true(Number(limited.retryAfter) >= 1);
  const placed = await send('POST', '/v1/order', {
    ip: '10.0.1.98',
    token: tok,
    body: { order: order(kp, Keypair.generate().publicKey.toBase58(), 'BUY', '0.5', '1'), orderType: 'GTC' },
  });
  t.is(placed.status, 429);
  t.deepEqual({ success: placed.body.success, code: placed.body.code }, { success: false, code: 'RATE_LIMITED' });
  t.regex(placed.body.errorMsg, /for this wallet/);
  // Another wallet is not limited by it.
  const other = (await signInFrom('10.0.1.2')).body.access_token;
  t.is((await send('GET', '/v1/orders', { ip: '10.0.1.3', token: other })).status, 200);
});

test.serial('every /v1 route: per IP, before authentication (a token-less flood is 429 too); other routes are not limited', async (t) => {
  const ip = '10.0.2.1';
  const statuses: number[] = [];
  for (let i = 0; i < 14; i++) statuses.push((await send('GET', '/v1/config', { ip })).status);
  t.deepEqual(statuses.slice(0, 12), Array(12).fill(200));
  t.deepEqual(statuses.slice(12), [429, 429]);
  t.is((await send('POST', '/v1/order', { ip, body: { order: {} } })).status, 429);
  t.is((await send('GET', '/api/markets/', { ip })).status, 200);
  t.is((await send('GET', '/v1/config', { ip: '10.0.2.2' })).status, 200);
});

test.serial('TRUST_PROXY=1: the forwarded host and proto make the links', async (t) => {
  const r = await send('GET', '/api/parlays/admin/?page=2', {
    ip: '10.0.3.1',
    token: token({ sub: 'root', is_superuser: true }),
    headers: { 'x-forwarded-host': 'api.example.com', 'x-forwarded-proto': 'https' },
  });
  t.is(r.status, 200);
  t.is(r.body.previous, 'https://api.example.com/api/parlays/admin/?page=1');
  const bad = await send('GET', '/api/parlays/admin/?page=2', {
    ip: '10.0.3.1',
    token: token({ sub: 'root', is_superuser: true }),
    headers: { 'x-forwarded-host': '[::1' },
  });
  t.is(bad.status, 400);
  t.regex(bad.body.message, /X-Forwarded-Host/);
});

test('token buckets: refill at the rate, idle ones are dropped, never more than maxKeys', (t) => {
  let now = 0;
  const l = new RateLimiter({ perSecond: 10, burst: 2 }, 1000, () => now);
  t.is(l.take('a'), 0);
  t.is(l.take('a'), 0);
  t.is(l.take('a'), 0.1);
  now += 100;
  t.is(l.take('a'), 0);
  for (let i = 0; i < 5000; i++) l.take(`k${i}`);
  t.true(l.size <= 1000, String(l.size));
  now += 10_000; // every bucket full again
  l.take('b');
  t.is(l.size, 1);
  t.is(new RateLimiter({ perSecond: 0, burst: 1 }).take('x'), 0); // 0: off
});

// Hostile input at the HTTP edge (issue 19, reproductions 5, 8, 9, JSON depth and the sign-in replay
// memory), on PostgreSQL: unclean strings, undecodable bytes, deep nesting and bad hosts are 4xx,
// never a 500 nor a row.
import test from 'ava';
import { request } from 'node:http';
import pg from 'pg';
import { Keypair } from '@solana/web3.js';
import { testNode, call, token, WEBHOOK_SECRET } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { bearer } from '../../helpers/clob.ts';
import { parlayCreated, rawTx } from '../../helpers/events.ts';
import { signIn } from '../../../src/clob/sign-in.ts';
import type { ServiceNode } from '../../../src/node.ts';

let node: ServiceNode;
let dbUrl: string;
let drop: () => Promise<void>;
let tok: string;
test.before(async () => {
  const db = await freshDatabase();
  drop = db.drop;
  dbUrl = db.url;
  node = await testNode({ DATABASE_URL: db.url });
  tok = await bearer(node.url, Keypair.generate());
});
test.after.always(async () => {
  await node?.close();
  await drop?.();
});

const hook = (body: string | Buffer) =>
  fetch(`${node.url}/api/parlays/webhooks/indexer/`, {
    method: 'POST',
    headers: { authorization: WEBHOOK_SECRET, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

async function rows(sql: string, params: unknown[] = []): Promise<any[]> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

test('reproduction 5: NUL and invalid UTF-8 in query strings are a 400', async (t) => {
  for (const q of ['taker=a%00b', 'id=a%00b', 'maker=%00', 'asset_id=x%00', 'owner=%01', 'taker=%FF', 'taker=%C3%28', 'id=%']) {
    const r = await call(node.url, 'GET', `/v1/trades?${q}`, { token: tok });
    t.is(r.status, 400, `${q}: ${JSON.stringify(r.body)}`);
    t.is(r.body.error, 'invalid_request', q);
  }
  t.is((await call(node.url, 'GET', '/v1/open-orders/a%00b', { token: tok })).status, 400);
  t.is((await call(node.url, 'GET', `/v1/trades?taker=${'a'.repeat(300)}`, { token: tok })).status, 400);
  t.is((await call(node.url, 'GET', '/v1/trades?taker=abc', { token: tok })).status, 200);
});

test('reproduction 5: NUL (and unpaired surrogates) in JSON bodies are a 400', async (t) => {
  const cancel = await call(node.url, 'POST', '/v1/orders/cancel', { token: tok, raw: '{"orderID":"a\\u0000b"}' });
  t.is(cancel.status, 400);
  t.is(cancel.body.error, 'malformed_body');
  t.regex(cancel.body.message, /NUL/);
  t.is((await call(node.url, 'POST', '/v1/orders/cancel-batch', { token: tok, raw: '{"orderIDs":["\\u0000"]}' })).status, 400);
  t.is((await call(node.url, 'POST', '/v1/orders/cancel', { token: tok, raw: '{"orderID":"\\ud800"}' })).status, 400);
  t.is((await call(node.url, 'POST', '/v1/orders/cancel', { token: tok, raw: '{"a\\u0000":1}' })).status, 400);
  // Ids are bounded: printable ASCII, at most 128 characters.
  t.is((await call(node.url, 'POST', '/v1/orders/cancel', { token: tok, body: { orderID: 'x'.repeat(129) } })).status, 400);
  t.is((await call(node.url, 'POST', '/v1/orders/cancel', { token: tok, body: { orderID: 'a\tb' } })).status, 400);
  t.is((await call(node.url, 'POST', '/v1/orders/cancel', { token: tok, body: { orderID: `0x${'ab'.repeat(32)}` } })).status, 200);
});

test('reproduction 5: a validly signed Platform JWT with NUL in sub or a 300-character wallet is a 401', async (t) => {
  for (const claims of [
    { sub: 'a\u0000b' },
    { sub: 'u-1', wallet: 'W'.repeat(300) },
    { sub: 's'.repeat(256) },
    { sub: 'u-1', wallet: 'a\u0000' },
    { sub: 'line\nbreak' },
  ]) {
    const r = await call(node.url, 'GET', '/api/parlays/user/', { token: token(claims as any) });
    t.is(r.status, 401, JSON.stringify(claims));
    t.is(r.body.error, 'unauthorized');
  }
  t.is(
    (await call(node.url, 'GET', '/api/parlays/user/', { token: token({ sub: 'u-1', wallet: Keypair.generate().publicKey.toBase58() }) }))
      .status,
    200,
  );
  t.is((await rows(`select count(*)::int as n from users where id like '%' || chr(1) || '%' or length(id) > 255`))[0].n, 0);
});

test('reproduction 8: a webhook body with bytes FF or C3 28 is a 400, never stored as U+FFFD', async (t) => {
  const user = Keypair.generate().publicKey;
  for (const [i, bad] of [
    [1, Buffer.from([0xff])],
    [2, Buffer.from([0xc3, 0x28])],
  ] as const) {
    const sig = `sig${i}${'1'.repeat(40)}`;
    const text = JSON.stringify([rawTx(sig, 100 + i, [parlayCreated(9100 + i, user, 100 + i)])]);
    const at = text.indexOf(sig) + 3;
    const body = Buffer.concat([Buffer.from(text.slice(0, at)), bad, Buffer.from(text.slice(at))]);
    const r = await hook(body);
    t.is(r.status, 400, JSON.stringify(r.body));
    t.is(r.body.error, 'malformed_body');
    t.regex(r.body.message, /UTF-8/);
  }
  t.is(
    (await rows(`select count(*)::int as n from parlays where tx_signature like '%' || chr(65533) || '%' or parlay_id in (9101, 9102)`))[0]
      .n,
    0,
  );
});

const nested = (levels: number, leaf = '1') => '['.repeat(levels) + leaf + ']'.repeat(levels);

test('JSON depth: a body nested deeper than HTTP_JSON_MAX_DEPTH (64) is a 400 before any schema; 20,000 levels crash nothing', async (t) => {
  const user = Keypair.generate().publicKey;
  const tx = JSON.stringify(rawTx(`deep${'1'.repeat(40)}`, 300, [parlayCreated(9200, user, 300)]));
  const deep = await hook(`[${tx.slice(0, -1)},"extra":${nested(70)}}]`);
  t.is(deep.status, 400, JSON.stringify(deep.body));
  t.regex(deep.body.message, /nested deeper than 64 levels/);
  for (const levels of [20_000, 200_000]) {
    const h = await hook(nested(levels));
    t.is(h.status, 400);
    t.regex(h.body.message, /nested deeper/);
    if (levels * 2 > 128 * 1024) continue; // beyond the ordinary routes' body limit: a 413 there
    const quote = await call(node.url, 'POST', '/api/markets/parlay-quote/', { raw: `{"legs":${nested(levels, '{"a":1}')}}` });
    t.is(quote.status, 400);
    t.regex(quote.body.message, /nested deeper/);
    const order = await call(node.url, 'POST', '/v1/order', { token: tok, raw: `{"order":${nested(levels)}}` });
    t.is(order.status, 400);
    t.is(order.body.code, 'INVALID_ORDER');
  }
  // Brackets inside strings are not nesting.
  const inString = await call(node.url, 'POST', '/v1/orders/cancel', { token: tok, body: { orderID: '[['.repeat(60) } });
  t.is(inString.status, 200);
  t.is((await fetch(`${node.url}/healthz`)).status, 200);
});

function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const u = new URL(node.url);
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET', headers, setHost: false }, (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('reproduction 9: a Host that is not a host is a 400; forwarded headers are ignored without TRUST_PROXY', async (t) => {
  const admin = `Bearer ${token({ sub: 'root', is_superuser: true })}`;
  const host = new URL(node.url).host;
  for (const bad of ['exa mple', '[::1', 'a/b', 'x:y:z']) {
    const r = await rawGet('/api/parlays/admin/?page=2', { host: bad, authorization: admin });
    t.is(r.status, 400, bad);
    t.is(r.body.error, 'invalid_request');
  }
  const forwarded = await rawGet('/api/parlays/admin/?page=2', {
    host,
    authorization: admin,
    'x-forwarded-host': '[::1',
    'x-forwarded-proto': 'https',
  });
  t.is(forwarded.status, 200, JSON.stringify(forwarded.body));
  t.is(forwarded.body.previous, `http://${host}/api/parlays/admin/?page=1`);
  const elsewhere = await rawGet('/api/parlays/admin/?page=2', { host, authorization: admin, 'x-forwarded-host': 'evil.example' });
  t.is(elsewhere.body.previous, `http://${host}/api/parlays/admin/?page=1`);
});

test('sign-in replay memory: rows older than twice the skew window are purged on a sign-in; a message still works once', async (t) => {
  const old = Keypair.generate().publicKey.toBase58();
  await rows(
    `insert into auth_signins (address, timestamp, created_at) values ($1, 1, now() - interval '121 seconds'), ($1, 2, now() - interval '10 minutes'), ($1, 3, now() - interval '30 seconds')`,
    [old],
  );
  const kp = Keypair.generate();
  // The node purged at its first sign-in (in test.before); the next purge is due a window later, so
  // this one uses a node of its own clock: a second node on the same database.
  const other = await testNode({ DATABASE_URL: dbUrl });
  try {
    const body = signIn(kp.publicKey.toBase58(), kp.secretKey);
    t.is((await call(other.url, 'POST', '/v1/auth/token', { body })).status, 200);
    const left = await rows(`select timestamp::int as ts from auth_signins where address = $1 order by 1`, [old]);
    t.deepEqual(
      left.map((r) => r.ts),
      [3],
    );
    // One use per message across nodes: the first node refuses the same message.
    t.is((await call(node.url, 'POST', '/v1/auth/token', { body })).status, 401);
  } finally {
    await other.close();
  }
});

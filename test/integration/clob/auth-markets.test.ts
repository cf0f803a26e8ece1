// Order-book sign-in and the market catalog, on PostgreSQL.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import jwt from 'jsonwebtoken';
import { testNode, call, token } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { conditionId, createMarket, superuser } from '../../helpers/clob.ts';
import { signIn } from '../../../src/clob/sign-in.ts';
import type { ServiceNode } from '../../../src/node.ts';

let node: ServiceNode;
let drop: () => Promise<void>;
test.before(async () => {
  const db = await freshDatabase();
  drop = db.drop;
  node = await testNode({ DATABASE_URL: db.url, CLOB_JWT_SECRET: 'clob-secret', CLOB_TOKEN_TTL_SECONDS: '300' });
});
test.after.always(async () => {
  await node?.close();
  await drop?.();
});

test('sign-in with a wallet signature gives a 300 s bearer token; each message once', async (t) => {
  const kp = Keypair.generate();
  const body = signIn(kp.publicKey.toBase58(), kp.secretKey);
  const r = await call(node.url, 'POST', '/v1/auth/token', { body });
  t.is(r.status, 200);
  t.is(r.body.token_type, 'Bearer');
  t.is(r.body.expires_in, 300);
  const claims = jwt.verify(r.body.access_token, 'clob-secret') as any;
  t.is(claims.sub, kp.publicKey.toBase58());
  t.is(claims.exp - claims.iat, 300);
  const replay = await call(node.url, 'POST', '/v1/auth/token', { body });
  t.is(replay.status, 401);
  t.is(replay.body.error, 'unauthorized');
});

test('sign-in refuses stale, forged and malformed messages', async (t) => {
  const kp = Keypair.generate();
  const other = Keypair.generate();
  const stale = signIn(kp.publicKey.toBase58(), kp.secretKey, Math.floor(Date.now() / 1000) - 120);
  t.is((await call(node.url, 'POST', '/v1/auth/token', { body: stale })).status, 401);
  const forged = signIn(kp.publicKey.toBase58(), other.secretKey);
  t.is((await call(node.url, 'POST', '/v1/auth/token', { body: forged })).status, 401);
  t.is((await call(node.url, 'POST', '/v1/auth/token', { body: { address: 'x' } })).status, 400);
  t.is(
    (
      await call(node.url, 'POST', '/v1/auth/token', {
        body: { ...signIn(kp.publicKey.toBase58(), kp.secretKey), signature: 'notbase58!!' },
      })
    ).status,
    401,
  );
});

test('a bearer token accepted once is still refused once expired, and a changed one never hits', async (t) => {
  const wallet = Keypair.generate().publicKey.toBase58();
  const now = Math.floor(Date.now() / 1000);
  const good = jwt.sign({ sub: wallet, scope: 'clob', iat: now, exp: now + 2 }, 'clob-secret', { algorithm: 'HS256' });
  const get = (tk: string) => call(node.url, 'GET', '/v1/orders', { token: tk });
  t.is((await get(good)).status, 200);
  t.is((await get(good)).status, 200); // the second from the cache of verified tokens
  // The same claims under another signature, and a token of another scope: refused though `good` is known.
  const [h, p, s] = good.split('.');
  t.is((await get(`${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`)).status, 401);
  t.is((await get(jwt.sign({ sub: wallet, scope: 'other', exp: now + 60 }, 'clob-secret'))).status, 401);
  t.is((await get(jwt.sign({ sub: wallet, scope: 'clob', exp: now + 60 }, 'wrong-secret'))).status, 401);
  await new Promise((r) => setTimeout(r, (now + 2) * 1000 - Date.now() + 50));
  const late = await get(good);
  t.is(late.status, 401);
  t.is(late.body.error, 'unauthorized');
});

test('GET /v1/config needs no token', async (t) => {
  const r = await call(node.url, 'GET', '/v1/config');
  t.is(r.status, 200);
  t.is(r.body.taker_fee_curve, 'min(p,1-p)');
  t.is(r.body.token_ttl_seconds, 300);
  t.is(r.body.mint_merge_matching, true);
});

test('market catalog: superuser create/read/edit, validation, public reads', async (t) => {
  const user = token({ sub: 'u', wallet: null });
  const cid = conditionId();
  const base = {
    condition_id: cid,
    yes_token_id: Keypair.generate().publicKey.toBase58(),
    no_token_id: Keypair.generate().publicKey.toBase58(),
  };
  t.is((await call(node.url, 'POST', '/api/markets/admin/markets/', { body: base })).status, 401);
  t.is((await call(node.url, 'POST', '/api/markets/admin/markets/', { token: user, body: base })).status, 403);
  for (const bad of [
    { ...base, condition_id: '0x12' },
    { ...base, tick_size: '0.03' },
    { ...base, yes_token_id: 'nope' },
    { ...base, no_token_id: base.yes_token_id },
    { ...base, status: 'weird' },
    { ...base, extra: 1 },
  ]) {
    const r = await call(node.url, 'POST', '/api/markets/admin/markets/', { token: superuser(), body: bad });
    t.is(r.status, 400, JSON.stringify(bad));
  }
  const created = await call(node.url, 'POST', '/api/markets/admin/markets/', {
    token: superuser(),
    body: {
      ...base,
      question: 'Q?',
      tick_size: '0.001',
      min_size: '5',
      taker_fee_bps: 200,
      on_chain_market_id: 101,
      reference_price: '0.55',
      start_time: '2030-01-01T00:00:00Z',
      delay_ms: 5000,
    },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  t.like(created.body.data, {
    condition_id: cid,
    tick_size: '0.001',
    min_size: '5',
    taker_fee_bps: 200,
    reference_price: '0.55',
    status: 'open',
    on_chain_market_id: 101,
    start_time: '2030-01-01T00:00:00.000Z',
    delay_ms: 5000,
  });
  t.is((await call(node.url, 'POST', '/api/markets/admin/markets/', { token: superuser(), body: base })).status, 409);
  const patched = await call(node.url, 'PATCH', `/api/markets/admin/markets/${cid}/`, {
    token: superuser(),
    body: { status: 'closed', question: 'Q2?' },
  });
  t.is(patched.status, 200);
  t.is(patched.body.data.status, 'closed');
  t.is(
    (await call(node.url, 'PATCH', `/api/markets/admin/markets/0x${'0'.repeat(64)}/`, { token: superuser(), body: { status: 'closed' } }))
      .status,
    404,
  );
  const other = await createMarket(node.url);
  const clash = await call(node.url, 'PATCH', `/api/markets/admin/markets/${other.condition_id}/`, {
    token: superuser(),
    body: { on_chain_market_id: 101 },
  });
  t.is(clash.status, 409);
  const pub = await call(node.url, 'GET', '/api/markets/?status=closed');
  t.deepEqual(
    pub.body.data.map((m: any) => m.condition_id),
    [cid],
  );
  t.is((await call(node.url, 'GET', `/api/markets/admin/markets/${cid}/`, { token: superuser() })).body.data.question, 'Q2?');
});

// Cancel-on-disconnect (issue 8, item 4) on a two-node cluster: real Kafka, PostgreSQL and the local
// chain. A wallet that opted in with a heartbeat and then went silent loses its resting orders
// through the books' cancel path (ledger: order_cancelled, reason heartbeat_timeout), exactly once
// whichever node got its heartbeats; a wallet that keeps beating, or never opted in, keeps them.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import { call } from '../../helpers/node.ts';
import { bearer, createMarket, order } from '../../helpers/clob.ts';
import { clobWorld, secondNode, U, type ClobWorld } from '../../helpers/clob-world.ts';
import type { ServiceNode } from '../../../src/node.ts';

// Generous against a loaded CI machine: a heartbeat every 300 ms must never leave a gap this long.
const TIMEOUT_MS = 2500;
let w: ClobWorld;
let n1: ServiceNode;
let n2: ServiceNode;

test.before(async () => {
  w = await clobWorld({ CLOB_HEARTBEAT_TIMEOUT_MS: String(TIMEOUT_MS) });
  n1 = w.node;
  n2 = await secondNode(w, { CLOB_HEARTBEAT_TIMEOUT_MS: String(TIMEOUT_MS) });
});
test.after.always(async () => {
  await n2?.close();
  await w?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function wallet() {
  const kp = Keypair.generate();
  await w.chain.fundWallet(kp.publicKey, 10n ** 9n, 1_000n * U);
  return { kp, tok: await bearer(n1.url, kp) };
}

async function place(node: ServiceNode, tok: string, o: any) {
  const r = await call(node.url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType: 'GTC' } });
  if (r.status !== 200 || r.body.status !== 'live') throw new Error(`place: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.orderID as string;
}

const statuses = async (tok: string) =>
  Object.fromEntries((await call(n1.url, 'GET', '/v1/open-orders', { token: tok })).body.map((o: any) => [o.id, o.status]));

async function cancelMessages(ids: string[]) {
  const db = n1.orm.em.fork() as any;
  return db.execute("select payload from ledger_messages where type = 'order_cancelled' and payload->>'order_id' in (?)", [ids]) as Promise<
    { payload: any }[]
  >;
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

test.serial('heartbeats need a bearer token and validate their body', async (t) => {
  t.is((await call(n1.url, 'POST', '/v1/heartbeats', { body: {} })).status, 401);
  const { tok } = await wallet();
  const bad = await call(n1.url, 'POST', '/v1/heartbeats', { token: tok, body: { enabled: 'yes' } });
  t.is(bad.status, 400);
  t.is(bad.body.error, 'invalid_request');
  const before = await call(n1.url, 'GET', '/v1/heartbeats', { token: tok });
  t.is(before.status, 200);
  t.like(before.body, { enabled: false, state: 'off', timeout_ms: TIMEOUT_MS });
});

test.serial('a silent wallet loses its resting orders once, on one node, with reason heartbeat_timeout', async (t) => {
  const market2 = await createMarket(n1.url, { min_size: '1' });
  const silent = await wallet();
  const beating = await wallet();
  const never = await wallet();
  // Heartbeats go to both nodes: any node may get them.
  const hb = await call(n1.url, 'POST', '/v1/heartbeats', { token: silent.tok });
  t.is(hb.status, 200, JSON.stringify(hb.body));
  t.like(hb.body, { enabled: true, state: 'armed', timeout_ms: TIMEOUT_MS });
  t.truthy(hb.body.expires_at);
  t.is((await call(n2.url, 'POST', '/v1/heartbeats', { token: silent.tok })).status, 200);
  t.is((await call(n2.url, 'POST', '/v1/heartbeats', { token: beating.tok })).status, 200);
  // `beating` keeps its heartbeats going from now on (alternating nodes), well past the timeout;
  // `silent` stops after its orders are placed.
  let keep = true;
  const beat = (async () => {
    let i = 0;
    while (keep) {
      await sleep(300);
      await call((i++ % 2 ? n1 : n2).url, 'POST', '/v1/heartbeats', { token: beating.tok });
    }
  })();
  const silentOrders = [
    await place(n1, silent.tok, order(silent.kp, w.market.yes_token_id, 'BUY', '0.20', '5')),
    await place(n2, silent.tok, order(silent.kp, w.market.no_token_id, 'BUY', '0.10', '5')),
    await place(n1, silent.tok, order(silent.kp, market2.yes_token_id, 'BUY', '0.30', '5')),
  ];
  const beatingOrder = await place(n1, beating.tok, order(beating.kp, w.market.yes_token_id, 'BUY', '0.21', '5'));
  const neverOrder = await place(n2, never.tok, order(never.kp, w.market.yes_token_id, 'BUY', '0.22', '5'));

  await until(
    "the silent wallet's orders to be cancelled",
    async () => Object.values(await statuses(silent.tok)).filter((s) => s === 'CANCELED').length === 3,
  );
  await sleep(TIMEOUT_MS + 500);
  keep = false;
  await beat;

  const s = await statuses(silent.tok);
  for (const id of silentOrders) t.is(s[id], 'CANCELED', id);
  t.is((await statuses(beating.tok))[beatingOrder], 'LIVE', 'a wallet that keeps beating keeps its orders');
  t.is((await statuses(never.tok))[neverOrder], 'LIVE', 'a wallet that never opted in keeps its orders');
  // The ledger: one order_cancelled per order, with the reason.
  const msgs = await cancelMessages(silentOrders);
  t.is(msgs.length, 3);
  for (const m of msgs) t.is(m.payload.reason, 'heartbeat_timeout');
  // The book agrees: nothing of the silent wallet rests.
  t.deepEqual((await call(n2.url, 'GET', '/v1/orders', { token: silent.tok })).body, []);
  // Exactly one node acted.
  const st = await call(n2.url, 'GET', '/v1/heartbeats', { token: silent.tok });
  t.like(st.body, { state: 'expired', enabled: false, cancelled_at_last_expiry: 3 });
  t.truthy(st.body.last_expired_at);
  const row = (
    await (n1.orm.em.fork() as any).execute('select claimed_by from clob_heartbeats where wallet = ?', [silent.kp.publicKey.toBase58()])
  )[0];
  t.true([n1.config.nodeId, n2.config.nodeId].includes(row.claimed_by));
  const expiries = async (n: ServiceNode) => {
    const text = (await call(n.url, 'GET', '/metrics')).body as string;
    return Number(/^clob_heartbeat_expiries_total\{[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
  };
  t.is((await expiries(n1)) + (await expiries(n2)), 1, 'one expiry across the cluster');

  // Disarmed after the expiry: an order placed without a new heartbeat stays.
  const later = await place(n1, silent.tok, order(silent.kp, w.market.yes_token_id, 'BUY', '0.23', '5'));
  await sleep(TIMEOUT_MS + 1000);
  t.is((await statuses(silent.tok))[later], 'LIVE');
  // A new heartbeat arms it again; opting out disarms it before the timeout.
  t.is((await call(n1.url, 'POST', '/v1/heartbeats', { token: silent.tok })).body.state, 'armed');
  const off = await call(n2.url, 'POST', '/v1/heartbeats', { token: silent.tok, body: { enabled: false } });
  t.like(off.body, { state: 'off', enabled: false, expires_at: null });
  await sleep(TIMEOUT_MS + 1000);
  t.is((await statuses(silent.tok))[later], 'LIVE', 'opted out: nothing cancelled');
  t.is((await cancelMessages([later])).length, 0);
});

test.serial('an expiry claimed by a node that died is taken over after the lease, without cancelling twice', async (t) => {
  const { kp, tok } = await wallet();
  t.is((await call(n1.url, 'POST', '/v1/heartbeats', { token: tok, body: { enabled: false } })).status, 200);
  const id = await place(n1, tok, order(kp, w.market.yes_token_id, 'BUY', '0.24', '5'));
  // A claim left `expiring` by a dead node, long ago, for a heartbeat that is long past.
  const db = n1.orm.em.fork() as any;
  await db.execute(
    `update clob_heartbeats set state = 'expiring', claimed_by = 'dead-node', claimed_at = now() - interval '1 hour',
       last_seen_at = now() - interval '1 hour', expires_at = now() - interval '1 hour' where wallet = ?`,
    [kp.publicKey.toBase58()],
  );
  // The order is cancelled (the book's commit), then the claim is closed once the answer is back.
  const claim = async () =>
    (await db.execute('select state, claimed_by, cancelled from clob_heartbeats where wallet = ?', [kp.publicKey.toBase58()]))[0];
  await until('the takeover', async () => (await statuses(tok))[id] === 'CANCELED' && (await claim()).state !== 'expiring');
  const row = await claim();
  t.is(row.state, 'expired');
  t.not(row.claimed_by, 'dead-node');
  t.is(row.cancelled, 1);
  t.is((await cancelMessages([id])).length, 1);
});

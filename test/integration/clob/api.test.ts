// The order book through the real front door, real Kafka, PostgreSQL and the local chain: every
// route, rejection code and cancel reason, and two wallets trading with mint and merge. Its node
// checks signatures on two worker threads (src/clob/sigverify.ts), other suites on the event loop.
import test from 'ava';
import { Keypair, PublicKey } from '@solana/web3.js';
import { call } from '../../helpers/node.ts';
import { bearer, createMarket, order } from '../../helpers/clob.ts';
import { approve } from '../../helpers/chain-market.ts';
import { clobWorld, U, type ClobWorld } from '../../helpers/clob-world.ts';
import type { ServiceNode } from '../../../src/node.ts';

let w: ClobWorld;
let node: ServiceNode;
let chain: ClobWorld['chain'];
let market: any;
let alice: Keypair;
let bob: Keypair;
let delegate: Keypair;
let A: string; // bearer tokens
let B: string;

test.before(async () => {
  w = await clobWorld({ CLOB_SIGVERIFY_THREADS: '2' });
  ({ node, chain, market, alice, bob, delegate, A, B } = w);
});
test.after.always(async () => {
  await w?.close();
});

const YES = () => market.yes_token_id as string;
const NO = () => market.no_token_id as string;
const place = (tok: string, o: any, orderType = 'GTC') =>
  call(node.url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType } });

test.serial('every /v1 route but config, auth and markets needs a bearer token', async (t) => {
  for (const [m, p] of [
    ['POST', '/v1/order'],
    ['GET', '/v1/orders'],
    ['POST', '/v1/orders/cancel-all'],
    ['GET', '/v1/open-orders'],
    ['GET', '/v1/trades'],
  ] as const) {
    const r = await call(node.url, m, p, m === 'POST' ? { body: {} } : {});
    t.is(r.status, 401, `${m} ${p}`);
    t.is(r.body.error, 'unauthorized');
  }
  t.is((await call(node.url, 'GET', `/v1/markets/${market.condition_id}`)).status, 200);
});

test.serial('rejections: every code of the contract', async (t) => {
  const code = async (tok: string, o: any, type = 'GTC') => {
    const r = await place(tok, o, type);
    t.is(r.status, 400, JSON.stringify(r.body));
    t.false(r.body.success);
    return r.body.code;
  };
  const good = order(alice, YES(), 'BUY', '0.40', '10');
  t.is(await code(A, { ...good, signature: order(bob, YES(), 'BUY', '0.40', '10').signature }), 'INVALID_SIGNATURE');
  t.is(await code(B, good), 'NOT_OWNER');
  t.is(await code(A, order(alice, YES(), 'BUY', '0.405', '10')), 'INVALID_TICK_SIZE');
  t.is(await code(A, order(alice, YES(), 'BUY', '0.40', '0.5')), 'INVALID_MIN_SIZE');
  t.is(await code(A, order(alice, Keypair.generate().publicKey.toBase58(), 'BUY', '0.40', '10')), 'MARKET_NOT_FOUND');
  t.is(await code(A, order(alice, YES(), 'BUY', '0.40', '10', { expiration: Math.floor(Date.now() / 1000) - 10 }), 'GTD'), 'ORDER_EXPIRED');
  t.is(await code(A, order(alice, YES(), 'BUY', '0.40', '100000')), 'INSUFFICIENT_BALANCE');
  t.is(await code(A, { ...good, salt: 'x' }), 'INVALID_ORDER');
  const closed = await createMarket(node.url, { status: 'closed' });
  t.is(await code(A, order(alice, closed.yes_token_id, 'BUY', '0.40', '10')), 'MARKET_CLOSED');
  // A resting order, then a marketable one against it without the taker fee, and an unfillable FOK.
  const rest = await place(A, order(alice, YES(), 'BUY', '0.30', '5'));
  t.is(rest.body.status, 'live');
  t.is(await code(B, order(bob, YES(), 'SELL', '0.30', '1', { feeRateBps: 0 })), 'FEE_RATE_TOO_LOW');
  t.is(await code(B, order(bob, YES(), 'SELL', '0.30', '50', { feeRateBps: 100 }), 'FOK'), 'FOK_NOT_FILLED');
  const dup = order(alice, YES(), 'BUY', '0.20', '5');
  t.is((await place(A, dup)).status, 200);
  t.is(await code(A, dup), 'DUPLICATE_ORDER');
  await call(node.url, 'POST', '/v1/orders/cancel-all', { token: A });
});

test.serial('a resting order warns about a missing allowance; an approved one does not', async (t) => {
  const r = await place(A, order(alice, YES(), 'BUY', '0.10', '5'));
  t.is(r.status, 200);
  t.deepEqual(r.body.warnings, ['allowance']);
  const cfg = await call(node.url, 'GET', '/v1/config');
  t.is(cfg.body.delegate, delegate.publicKey.toBase58());
  await approve(chain, alice, new PublicKey(cfg.body.collateral_mint), delegate.publicKey, 1_000n * U);
  const ok = await place(A, order(alice, YES(), 'BUY', '0.11', '5'));
  t.deepEqual(ok.body.warnings, []);
  await call(node.url, 'POST', '/v1/orders/cancel-all', { token: A });
});

test.serial('two wallets trade: complementary, mint and merge; one trade per taker execution', async (t) => {
  const Ec = await bearer(node.url, Keypair.generate());
  // Alice bids YES at 0.40 and 0.41; Bob sells 12 YES into both levels: one trade, two maker legs.
  const a1 = await place(A, order(alice, YES(), 'BUY', '0.40', '5'));
  const a2 = await place(A, order(alice, YES(), 'BUY', '0.41', '5'));
  const sweep = await place(B, order(bob, YES(), 'SELL', '0.40', '12', { feeRateBps: 100 }));
  t.is(sweep.status, 200, JSON.stringify(sweep.body));
  t.is(sweep.body.status, 'matched', 'marketable on arrival');
  const rest = (await call(node.url, 'GET', `/v1/orders/${sweep.body.orderID}`, { token: B })).body;
  t.like(rest, { remainingSize: '2', originalSize: '12', side: 'SELL' }, 'the rest of the sell rests');
  t.is(sweep.body.tradeIDs.length, 1);
  const trades = await call(node.url, 'GET', `/v1/trades?market=${market.condition_id}`, { token: B });
  const tr = trades.body.find((x: any) => x.id === sweep.body.tradeIDs[0]);
  t.is(tr.match_type, 'COMPLEMENTARY');
  t.is(tr.trader_side, 'TAKER');
  t.deepEqual(
    tr.maker_orders.map((m: any) => [m.order_id, m.matched_amount, m.price]),
    [
      [a2.body.orderID, '5', '0.41'],
      [a1.body.orderID, '5', '0.4'],
    ],
  );
  t.is(tr.size, '10');
  const asMaker = await call(node.url, 'GET', `/v1/trades?market=${market.condition_id}&maker=${alice.publicKey.toBase58()}`, { token: A });
  t.is(asMaker.body[0].trader_side, 'MAKER');
  // Fully matched orders are gone from the book but stay readable in the ledger.
  t.is((await call(node.url, 'GET', `/v1/orders/${a1.body.orderID}`, { token: A })).status, 404);
  const oo = await call(node.url, 'GET', `/v1/open-orders/${a1.body.orderID}`, { token: A });
  t.like(oo.body, { status: 'MATCHED', original_size: '5', size_matched: '5', price: '0.4', type: 'GTC' });
  t.deepEqual(oo.body.associate_trades, [tr.id]);
  await call(node.url, 'POST', '/v1/orders/cancel-all', { token: B });
  // MINT: Alice bids YES 0.45, Bob bids NO 0.55 (p + q = 1).
  await place(A, order(alice, YES(), 'BUY', '0.45', '3'));
  const mint = await place(B, order(bob, NO(), 'BUY', '0.55', '3', { feeRateBps: 100 }));
  t.is(mint.body.status, 'matched', JSON.stringify(mint.body));
  const mt = (await call(node.url, 'GET', `/v1/trades?id=${mint.body.tradeIDs[0]}`, { token: B })).body[0];
  t.is(mt.match_type, 'MINT');
  // MERGE: Alice offers YES 0.45, Bob offers NO 0.55 (p + q = 1).
  await place(A, order(alice, YES(), 'SELL', '0.45', '2'));
  const merge = await place(B, order(bob, NO(), 'SELL', '0.55', '2', { feeRateBps: 100 }));
  t.is(merge.body.status, 'matched', JSON.stringify(merge.body));
  t.is((await call(node.url, 'GET', `/v1/trades?id=${merge.body.tradeIDs[0]}`, { token: A })).body[0].match_type, 'MERGE');
  // Every TradeParams filter, always within the caller's own trades.
  const q = (tok: string, qs: string) =>
    call(node.url, 'GET', `/v1/trades?${qs}`, { token: tok }).then((r) => r.body.map((x: any) => x.id));
  const bobs = await q(B, `market=${market.condition_id}`);
  t.true(bobs.length >= 3);
  t.deepEqual(await q(B, `taker=${bob.publicKey.toBase58()}&market=${market.condition_id}`), bobs, 'Bob took every one of them');
  t.deepEqual(await q(B, `asset_id=${NO()}`), [merge.body.tradeIDs[0], mint.body.tradeIDs[0]]);
  t.deepEqual(await q(B, 'limit=1'), [bobs[0]]);
  t.deepEqual(await q(B, `owner=${alice.publicKey.toBase58()}`), [], 'another owner filter still shows only the caller');
  t.deepEqual(await q(B, `before=${Math.floor(Date.now() / 1000) + 60}&after=0`), bobs);
  t.deepEqual(await q(B, `after=${Math.floor(Date.now() / 1000) + 60}`), []);
  // before/after compare the match_time shown (whole seconds): strictly, both ways.
  const shown = Number((await call(node.url, 'GET', `/v1/trades?id=${mint.body.tradeIDs[0]}`, { token: B })).body[0].match_time);
  t.false((await q(B, `after=${shown}`)).includes(mint.body.tradeIDs[0]), 'after = its match_time excludes it');
  t.false((await q(B, `before=${shown}`)).includes(mint.body.tradeIDs[0]), 'before = its match_time excludes it');
  t.true((await q(B, `after=${shown - 1}&before=${shown + 1}`)).includes(mint.body.tradeIDs[0]));
  t.deepEqual(await q(Ec, `market=${market.condition_id}`), [], 'a wallet without trades sees none');
  t.is((await call(node.url, 'GET', '/v1/trades?limit=501', { token: B })).status, 400);
  const last = await call(node.url, 'GET', `/v1/trades/last?market=${market.condition_id}`, { token: A });
  t.is(last.status, 200);
  t.is(last.body.market, market.condition_id);
  const pub = await call(node.url, 'GET', `/v1/markets/${market.condition_id}`);
  // The last trade (Bob's NO order against Alice's YES, at 0.55 NO) in YES terms, as best bid/ask are.
  t.is(pub.body.last_price, '0.45');
});

test.serial('cancels: reasons, partial success, batch, all, market; reads scoped to the caller', async (t) => {
  const o1 = (await place(A, order(alice, YES(), 'BUY', '0.20', '2'))).body.orderID;
  const o2 = (await place(A, order(alice, YES(), 'BUY', '0.21', '2'))).body.orderID;
  const o3 = (await place(A, order(alice, NO(), 'BUY', '0.22', '2'))).body.orderID;
  const book = await call(node.url, 'GET', `/v1/orders?market=${market.condition_id}`, { token: A });
  t.deepEqual(new Set(book.body.map((o: any) => o.orderHash)), new Set([o1, o2, o3]));
  t.like(
    book.body.find((o: any) => o.orderHash === o1),
    { maker: alice.publicKey.toBase58(), side: 'BUY', price: '0.2', originalSize: '2', remainingSize: '2', orderType: 'GTC' },
  );
  t.deepEqual(
    (await call(node.url, 'GET', `/v1/orders?market=${market.condition_id}`, { token: B })).body.filter(
      (o: any) => o.maker === alice.publicKey.toBase58(),
    ),
    [],
  );
  // With mint/merge matching, Alice's NO bid at 0.22 is a YES ask at 0.78 for a taker.
  const quoted = (await call(node.url, 'GET', `/v1/markets/${market.condition_id}`)).body;
  t.like(quoted, { best_bid: { price: '0.21', size: '2' }, best_ask: { price: '0.78', size: '2' } });
  const vr = await call(node.url, 'GET', '/v1/orders/value-range?min_value=0.43', { token: A });
  t.deepEqual(
    vr.body.map((o: any) => o.orderHash),
    [o3],
  );
  // Exact: 0.29 × 100 is 29 (a float product would say 28.999…), so min_value=29 includes it.
  const o4 = (await place(A, order(alice, YES(), 'BUY', '0.29', '100'))).body.orderID;
  const values = async (min: string) =>
    (await call(node.url, 'GET', `/v1/orders/value-range?min_value=${min}`, { token: A })).body.map((o: any) => o.orderHash);
  t.deepEqual(await values('29'), [o4]);
  t.deepEqual(await values('29.000000000001'), []);
  t.deepEqual(new Set(await values('0.44')), new Set([o3, o4]));
  t.is((await call(node.url, 'GET', '/v1/orders/value-range?min_value=-1', { token: A })).status, 400);
  t.is((await call(node.url, 'GET', '/v1/orders/value-range', { token: A })).status, 400);
  t.deepEqual((await call(node.url, 'POST', '/v1/orders/cancel', { token: A, body: { orderID: o4 } })).body.canceled, [o4]);
  const foreign = await call(node.url, 'POST', '/v1/orders/cancel', { token: B, body: { orderID: o1 } });
  t.deepEqual(foreign.body, { canceled: [], not_canceled: { [o1]: 'not yours' } });
  const one = await call(node.url, 'POST', '/v1/orders/cancel', { token: A, body: { orderID: o1.toUpperCase().replace('0X', '0x') } });
  t.deepEqual(one.body, { canceled: [o1], not_canceled: {} });
  const unknown = `0x${'ab'.repeat(32)}`;
  const batch = await call(node.url, 'POST', '/v1/orders/cancel-batch', { token: A, body: { orderIDs: [o1, o2, unknown] } });
  t.deepEqual(batch.body, { canceled: [o2], not_canceled: { [o1]: 'already cancelled', [unknown]: 'order not found' } });
  const filled = (await call(node.url, 'GET', `/v1/open-orders?market=${market.condition_id}`, { token: A })).body.find(
    (o: any) => o.status === 'MATCHED',
  );
  const again = await call(node.url, 'POST', '/v1/orders/cancel', { token: A, body: { orderID: filled.id } });
  t.deepEqual(again.body.not_canceled, { [filled.id]: 'already filled' });
  // Orders the book no longer remembers (its finished-order memory is bounded) but the ledger
  // does: the reason comes from the ledger row.
  const db = node.orm.em.fork() as any;
  const forgotten = (n: number) => `0x${n.toString(16).padStart(64, 'f')}`;
  for (const [id, owner, status] of [
    [forgotten(1), alice, 'MATCHED'],
    [forgotten(2), alice, 'EXPIRED'],
    [forgotten(3), bob, 'MATCHED'],
  ] as const) {
    await db.execute(
      `insert into open_orders (id, market, asset_id, owner, owner_lc, side, outcome, original_size, size_matched, price, status, associate_trades, type, fee_rate_bps, expiration, created_at, updated_at)
      values (?, ?, ?, ?, ?, 'BUY', 'YES', 1000000, 0, 500000, ?, '[]', 'GTC', 0, 0, now(), now())`,
      [id, market.condition_id, YES(), owner.publicKey.toBase58(), owner.publicKey.toBase58().toLowerCase(), status],
    );
  }
  const old = await call(node.url, 'POST', '/v1/orders/cancel-batch', {
    token: A,
    body: { orderIDs: [forgotten(1), forgotten(2), forgotten(3)] },
  });
  t.deepEqual(old.body, {
    canceled: [],
    not_canceled: { [forgotten(1)]: 'already filled', [forgotten(2)]: 'already cancelled', [forgotten(3)]: 'not yours' },
  });
  await db.execute('delete from open_orders where id in (?)', [[forgotten(1), forgotten(2), forgotten(3)]]);
  const byMarket = await call(node.url, 'POST', '/v1/orders/cancel-market', {
    token: A,
    body: { market: market.condition_id, asset_id: NO() },
  });
  t.deepEqual(byMarket.body.canceled, [o3]);
  await place(A, order(alice, YES(), 'BUY', '0.23', '2'));
  const all = await call(node.url, 'POST', '/v1/orders/cancel-all', { token: A });
  t.is(all.body.canceled.length, 1);
  const statuses = (await call(node.url, 'GET', `/v1/open-orders?market=${market.condition_id}`, { token: A })).body.map(
    (o: any) => o.status,
  );
  t.true(statuses.includes('CANCELED'));
  t.true((await call(node.url, 'GET', '/v1/open-orders', { token: B })).body.every((o: any) => o.owner === bob.publicKey.toBase58()));
});

test.serial('size-update: internal token only; invalidates resting orders and frees their reservation', async (t) => {
  const id = (await place(A, order(alice, YES(), 'BUY', '0.30', '1000'))).body.orderID; // 300 collateral held
  const blocked = await place(A, order(alice, YES(), 'BUY', '0.30', '3000'));
  t.is(blocked.body.code, 'INSUFFICIENT_BALANCE');
  t.is((await call(node.url, 'POST', '/v1/orders/size-update', { body: { trade_id: 't', orders: [id] } })).status, 403);
  t.is((await call(node.url, 'POST', '/v1/orders/size-update', { auth: 'x', body: { trade_id: 't', orders: [id] } })).status, 403);
  const r = await fetch(`${node.url}/v1/orders/size-update`, {
    method: 'POST',
    headers: { 'x-internal-token': 'internal-secret', 'content-type': 'application/json' },
    body: JSON.stringify({ trade_id: 't-1', orders: [id], reason: 'settlement failed' }),
  });
  t.deepEqual(await r.json(), { invalidated: [id], not_found: [] });
  t.is((await call(node.url, 'GET', `/v1/open-orders/${id}`, { token: A })).body.status, 'INVALIDATED');
  t.is((await call(node.url, 'GET', `/v1/orders/${id}`, { token: A })).status, 404);
  // The reservation came back: a large order fits again (the wallet hears it from the ledger).
  let ok;
  for (let i = 0; i < 20; i++) {
    ok = await place(A, order(alice, YES(), 'BUY', '0.30', '1000'));
    if (ok.status === 200) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  t.is(ok!.status, 200, JSON.stringify(ok!.body));
  await call(node.url, 'POST', '/v1/orders/cancel-all', { token: A });
});

test('a body that is not JSON: POST /v1/order answers it as its rejections ({ success, errorMsg, code }), other routes { error, message }', async (t) => {
  const order = await call(node.url, 'POST', '/v1/order', { token: A, raw: '{"order": {"salt": ' });
  t.is(order.status, 400);
  t.deepEqual(Object.keys(order.body).sort(), ['code', 'errorMsg', 'success']);
  t.false(order.body.success);
  t.is(order.body.code, 'INVALID_ORDER');
  t.regex(order.body.errorMsg, /not valid JSON/);
  const cancel = await call(node.url, 'POST', '/v1/orders/cancel', { token: A, raw: '{"orderIds": [' });
  t.is(cancel.status, 400);
  t.is(cancel.body.error, 'malformed_body');
  t.regex(cancel.body.message, /not valid JSON/);
});

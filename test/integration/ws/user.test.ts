// The WebSocket `user` channel (issue 18, item 2; docs/ws.md), and both channels through two nodes
// of one cluster on Kafka and PostgreSQL: a missing, invalid or expired bearer token is refused
// (4401 with the reason); a wallet gets only its own order and trade messages; subscribers on node
// B see the orders placed through node A.
import test from 'ava';
import jwt from 'jsonwebtoken';
import { call, testNode, CLOB_SECRET, KAFKA_BROKERS } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';
import { WsClient } from '../../helpers/ws.ts';
import type { ServiceNode } from '../../../src/node.ts';

let w: ClobWorld;
let b: ServiceNode;
test.before(async () => {
  w = await clobWorld({ WS_IDLE_TIMEOUT_MS: '3000', WS_PING_MS: '500' });
  const c = w.node.config;
  b = await testNode({
    DATABASE_URL: c.databaseUrl,
    KAFKA_BROKERS,
    TOPIC_PREFIX: c.topicPrefix,
    TOPIC_PARTITIONS: String(c.partitions),
    NODE_ID: `${c.nodeId}b`,
    CLOB_COLLATERAL_MINT: c.collateralMint,
    CLOB_DELEGATE: c.delegate,
    CLOB_INTERNAL_TOKEN: 'internal-secret',
    WS_IDLE_TIMEOUT_MS: '3000',
    WS_PING_MS: '500',
  });
  // Both nodes in the group before orders flow (asks during a rebalance only wait).
  const deadline = Date.now() + 120_000;
  for (const n of [w.node, b]) while (!n.runtime.hasJoined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
});
test.after.always(async () => {
  await b?.close();
  await w?.close();
});

const place = async (who: 'alice' | 'bob', tok: string, side: 'BUY' | 'SELL', price: string, size: string) => {
  const r = await call(w.node.url, 'POST', '/v1/order', {
    token: who === 'alice' ? w.A : w.B,
    body: { order: order(w[who], tok, side, price, size, { feeRateBps: 100 }), orderType: 'GTC' },
  });
  if (r.status !== 200) throw new Error(`place: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

test.serial('a missing, invalid or expired token is refused with 4401 and the reason', async (t) => {
  const alice = w.alice.publicKey.toBase58();
  const expired = jwt.sign({ sub: alice, scope: 'clob', exp: Math.floor(Date.now() / 1000) - 60 }, CLOB_SECRET, { algorithm: 'HS256' });
  const cases: [string, () => Promise<WsClient>, RegExp][] = [
    ['expired (header)', () => WsClient.open(b.url, '/ws/user', { authorization: `Bearer ${expired}` }), /expired/],
    ['invalid (header)', () => WsClient.open(b.url, '/ws/user', { authorization: 'Bearer nope' }), /valid bearer token/],
    [
      'expired (auth message)',
      async () => {
        const c = await WsClient.open(b.url, '/ws/user');
        c.send({ type: 'auth', token: expired });
        return c;
      },
      /expired/,
    ],
    [
      'no token, a subscribe',
      async () => {
        const c = await WsClient.open(b.url, '/ws/user');
        c.send({ type: 'subscribe', assets_ids: [w.market.yes_token_id] });
        return c;
      },
      /authenticate first/,
    ],
    ['no token, silence', () => WsClient.open(b.url, '/ws/user'), /no token/],
  ];
  for (const [name, open, reason] of cases) {
    const c = await open();
    t.is(await c.closed(), 4401, name);
    t.regex(c.closeReason, reason, name);
    t.false(
      c.messages.some((m) => m.event_type === 'order' || m.event_type === 'trade'),
      `${name}: nothing sent`,
    );
  }
  // A platform (not order-book) token is no order-book token either.
  const platform = jwt.sign({ sub: alice }, CLOB_SECRET, { algorithm: 'HS256', expiresIn: 60 });
  const c = await WsClient.open(b.url, '/ws/user', { authorization: `Bearer ${platform}` });
  t.is(await c.closed(), 4401);
  t.regex(c.closeReason, /not an order-book token/);
});

test.serial('node B serves both channels of orders placed through node A; each wallet gets only its own messages', async (t) => {
  const Y = w.market.yes_token_id;
  const N = w.market.no_token_id;
  const M = w.market.condition_id;
  const alice = await WsClient.open(b.url, '/ws/user', { authorization: `Bearer ${w.A}` });
  await alice.until((m) => m.event_type === 'auth');
  const bob = await WsClient.open(b.url, '/ws/user');
  bob.send({ type: 'auth', token: w.B }); // as a browser does: no header
  await bob.until((m) => m.event_type === 'auth');
  const market = await WsClient.open(b.url, '/ws/market');
  market.send({ type: 'subscribe', assets_ids: [Y, N] });
  await market.until((m) => m.event_type === 'book' && m.asset_id === N);

  // Through node A: Alice rests a YES bid and a NO bid, Bob sells YES into hers (a fill), Alice cancels the NO bid.
  const a1 = await place('alice', Y, 'BUY', '0.40', '5');
  const a2 = await place('alice', N, 'BUY', '0.30', '4');
  const b1 = await place('bob', Y, 'SELL', '0.40', '2');
  t.is(b1.status, 'matched');
  t.is((await call(w.node.url, 'POST', '/v1/orders/cancel', { token: w.A, body: { orderID: a2.orderID } })).status, 200);

  // The market subscriber on node B sees it all, equal to node A's book route.
  const deadline = Date.now() + 30_000;
  let route: any;
  for (;;) {
    route = (await call(w.node.url, 'GET', `/v1/book?token_id=${Y}`)).body;
    if (JSON.stringify(market.view(Y)) === JSON.stringify({ bids: route.bids, asks: route.asks }) && route.bids.length) break;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.deepEqual(market.view(Y), { bids: [{ price: '0.4', size: '3' }], asks: [] });
  t.deepEqual(market.view(Y), { bids: route.bids, asks: route.asks }, "node B's channel equals node A's route");
  t.like(await market.until((m) => m.event_type === 'last_trade_price'), { market: M, asset_id: Y, price: '0.4', size: '2', side: 'SELL' });
  t.deepEqual(market.problems, []);

  // Alice: her placements, the fill of her bid, the cancel, and the trade as maker.
  const trade = await alice.until((m) => m.event_type === 'trade');
  t.like(trade, { market: M, asset_id: Y, side: 'SELL', size: '2', price: '0.4', status: 'MATCHED', trader_side: 'MAKER' });
  t.deepEqual(
    trade.maker_orders.map((m: any) => m.order_id),
    [a1.orderID],
    'a maker sees its own maker orders',
  );
  t.like(await alice.until((m) => m.event_type === 'order' && m.id === a1.orderID && m.type === 'PLACEMENT'), {
    asset_id: Y,
    side: 'BUY',
    price: '0.4',
    original_size: '5',
    status: 'LIVE',
  });
  t.like(await alice.until((m) => m.event_type === 'order' && m.id === a1.orderID && m.type === 'UPDATE'), {
    size_matched: '2',
    status: 'LIVE',
    original_size: '5',
    price: '0.4',
  });
  t.like(await alice.until((m) => m.event_type === 'order' && m.id === a2.orderID && m.type === 'CANCELLATION'), {
    asset_id: N,
    status: 'CANCELED',
    market: M,
  });
  // Bob: his taker order, matched, and the trade as taker.
  t.like(await bob.until((m) => m.event_type === 'order' && m.id === b1.orderID), {
    type: 'PLACEMENT',
    status: 'MATCHED',
    size_matched: '2',
  });
  t.like(await bob.until((m) => m.event_type === 'trade'), { status: 'MATCHED', trader_side: 'TAKER', price: '0.4' });

  await new Promise((r) => setTimeout(r, 500));
  const own = (c: WsClient, orders: string[]) =>
    c.messages
      .filter((m) => m.event_type === 'order' || m.event_type === 'trade')
      .filter((m) => (m.event_type === 'order' ? !orders.includes(m.id) : false));
  t.deepEqual(own(alice, [a1.orderID, a2.orderID]), [], 'alice gets no order of bob');
  t.deepEqual(own(bob, [b1.orderID]), [], 'bob gets no order of alice');
  t.is(alice.messages.filter((m) => m.event_type === 'trade').length, 1);
  t.is(bob.messages.filter((m) => m.event_type === 'trade').length, 1);
  t.false(JSON.stringify(market.messages).includes(w.alice.publicKey.toBase58()), 'the market channel names no wallet');
  for (const c of [alice, bob, market]) c.close();
});

// The MarketBook decider alone: validation, matching (price-time priority, sweeps, the distortion
// bound and its reference, remainders that rest on a crossed book, the maker caps splitting trades,
// FOK, self-trade filtering, mint/merge), fees, reservations, cancels, ejections (also those due at
// a PlaceOrder's or a release's time, before matching), the start window, reads and snapshots.
// Pure: no I/O.
import test from 'ava';
import {
  bestBidAsk,
  checkBook,
  fromSnapshot,
  getOrder,
  lastTrade,
  marketBookDecider as D,
  RELEASE_FORWARD_MAX,
  ordersOf,
  reservationOf,
  toSnapshot,
  cloneBook,
  FINISHED_CAP,
  BALANCES_MAX,
  type BookCommand,
  type BookEvent,
  type BookState,
  type MarketInput,
  type OrderInput,
} from '../../../../actors/market-book/index.ts';
import type { Forward } from '../../../../src/runtime/types.ts';
import { remember } from '../../../../actors/market-book/finished.ts';
import { LET_GO_CAP } from '../../../../actors/market-book/let-go.ts';

const MKT = '0x' + 'ab'.repeat(32);
const YES = 'YesMint1111111111111111111111111111111111111';
const NO = 'NoMint22222222222222222222222222222222222222';
const U = 1_000_000n;

function book(market: Partial<MarketInput> = {}) {
  let s: BookState = D.initial(MKT);
  const log: BookEvent[] = [];
  const send = (cmd: BookCommand) => {
    const d = D.decide(s, cmd);
    for (const e of d.events) {
      s = D.evolve(s, e);
      log.push(e);
    }
    return d as { events: BookEvent[]; reply: any; forward?: Forward };
  };
  send({
    type: 'ConfigureMarket',
    now: 0,
    market: { condition_id: MKT, yes_token_id: YES, no_token_id: NO, tick_size: '0.01', min_size: '1', taker_fee_bps: 0, ...market },
  });
  return {
    get s() {
      return s;
    },
    log,
    send,
  };
}

let n = 0;
/** price as a decimal (0.55), size in whole tokens. */
function order(
  maker: string,
  token: 'YES' | 'NO',
  side: 'BUY' | 'SELL',
  price: number,
  size: number,
  more: Partial<OrderInput> = {},
): OrderInput {
  return {
    hash: `0x${(++n).toString(16).padStart(64, '0')}`,
    maker,
    tokenId: token === 'YES' ? YES : NO,
    side,
    price: Math.round(price * 1e6),
    size: BigInt(Math.round(size * 1e6)),
    feeRateBps: 0,
    expiration: 0,
    orderType: 'GTC',
    createdAt: 1000,
    ...more,
  };
}

const place = (b: ReturnType<typeof book>, o: OrderInput, more: Partial<Extract<BookCommand, { type: 'PlaceOrder' }>> = {}) =>
  b.send({ type: 'PlaceOrder', order: o, now: 1000, mintMerge: true, distortionBound: 1_000_000, ...more });

const types = (events: BookEvent[]) => events.map((e) => e.type);
const trades = (events: BookEvent[]) => events.flatMap((e) => (e.type === 'TradeMatched' ? [e.trade] : []));

test('no market yet: MARKET_NOT_FOUND; a bad market config is refused', (t) => {
  const s = D.initial(MKT);
  const o = order('alice', 'YES', 'BUY', 0.5, 10);
  t.is(
    (D.decide(s, { type: 'PlaceOrder', order: o, now: 1, mintMerge: true, distortionBound: 20_000 }).reply as any).error,
    'MARKET_NOT_FOUND',
  );
  const bad = (m: Partial<MarketInput>) =>
    (D.decide(s, { type: 'ConfigureMarket', market: { condition_id: MKT, yes_token_id: YES, no_token_id: NO, ...m } }).reply as any).error;
  t.is(bad({ tick_size: '0.03' }), 'INVALID_MARKET');
  t.is(bad({ condition_id: '0x' + 'cd'.repeat(32) }), 'INVALID_MARKET');
  t.is(bad({ no_token_id: YES }), 'INVALID_MARKET');
  const ok = D.decide(s, {
    type: 'ConfigureMarket',
    market: {
      condition_id: MKT,
      yes_token_id: YES,
      no_token_id: NO,
      tick_size: '0.001',
      min_size: '5',
      start_time: '2030-01-01T00:00:00Z',
    },
  });
  t.like(ok.reply as any, {
    ok: true,
    market: { tick: 1000, minSize: 5_000_000n, startTime: Date.parse('2030-01-01T00:00:00Z'), status: 'open' },
  });
});

test('validation: tick, range, min size, token, shape, expiry, closed market, duplicates', (t) => {
  const b = book();
  const err = (o: OrderInput, now = 1000) => place(b, o, { now }).reply.error;
  t.is(err(order('a', 'YES', 'BUY', 0.555, 10)), 'INVALID_TICK_SIZE');
  t.is(err(order('a', 'YES', 'BUY', 0, 10)), 'INVALID_TICK_SIZE');
  t.is(err(order('a', 'YES', 'SELL', 1, 10)), 'INVALID_TICK_SIZE');
  t.is(err(order('a', 'YES', 'BUY', 0.5, 0.5)), 'INVALID_MIN_SIZE');
  t.is(err(order('a', 'YES', 'BUY', 0.5, 10, { tokenId: 'Other' })), 'INVALID_ORDER');
  t.is(err(order('a', 'YES', 'BUY', 0.5, 10, { side: 'HOLD' as any })), 'INVALID_ORDER');
  t.is(err(order('a', 'YES', 'BUY', 0.5, 10, { feeRateBps: -1 })), 'INVALID_ORDER');
  t.is(err(order('a', 'YES', 'BUY', 0.5, 10, { orderType: 'GTD', expiration: 0 })), 'ORDER_EXPIRED');
  t.is(err(order('a', 'YES', 'BUY', 0.5, 10, { orderType: 'GTD', expiration: 1 }), 1000), 'ORDER_EXPIRED');
  const o = order('a', 'YES', 'BUY', 0.5, 10);
  t.is(place(b, o).reply.status, 'live');
  t.is(err(o), 'DUPLICATE_ORDER');
  b.send({ type: 'CancelOrders', owner: 'a', orderIds: [o.hash], now: 1001 });
  t.is(err(o), 'DUPLICATE_ORDER', 'a finished order is remembered');
  b.send({
    type: 'ConfigureMarket',
    now: 2000,
    market: { condition_id: MKT, yes_token_id: YES, no_token_id: NO, tick_size: '0.01', min_size: '1', status: 'closed' },
  });
  t.is(err(order('a', 'YES', 'BUY', 0.5, 10)), 'MARKET_CLOSED');
  t.deepEqual(checkBook(b.s), []);
});

test('a resting order: status live, reservation collateral for BUY and tokens for SELL', (t) => {
  const b = book();
  const buy = order('alice', 'YES', 'BUY', 0.35, 10);
  const r = place(b, buy);
  t.like(r.reply, {
    status: 'live',
    orderID: buy.hash,
    makingAmount: 0n,
    takingAmount: 0n,
    tradeIDs: [],
    sizeMatched: 0n,
    remaining: 10n * U,
  });
  t.deepEqual(types(r.events), ['OrderPlaced']);
  t.like(r.events[0] as any, { status: 'LIVE', reservation: { asset: 'collateral', amount: 3_500_000n }, release: { amount: 0n } });
  t.deepEqual(reservationOf(order('bob', 'NO', 'SELL', 0.2, 7)), { asset: NO, amount: 7n * U });
  t.like(getOrder(b.s, buy.hash), { status: 'LIVE', remainingSize: 10n * U, price: 350_000 });
});

test('crossing: the maker price is the fill price, price-time priority, one trade per taker execution', (t) => {
  const b = book();
  const a1 = order('m1', 'YES', 'SELL', 0.52, 5);
  const a2 = order('m2', 'YES', 'SELL', 0.5, 3);
  const a3 = order('m3', 'YES', 'SELL', 0.5, 4);
  for (const o of [a1, a2, a3]) place(b, o);
  const taker = order('tk', 'YES', 'BUY', 0.55, 9, { feeRateBps: 100 });
  const r = place(b, taker, { tradeId: 'T1' });
  t.deepEqual(types(r.events), ['OrderPlaced', 'TradeMatched', 'OrderUpdated', 'OrderUpdated', 'OrderUpdated']);
  const [tr] = trades(r.events);
  t.like(tr, {
    id: 'T1',
    taker_order_id: taker.hash,
    market: MKT,
    asset_id: YES,
    side: 'BUY',
    size: 9n * U,
    price: 520_000,
    match_type: 'COMPLEMENTARY',
    match_time: 1000,
    owner: 'tk',
    trader_side: 'TAKER',
  });
  t.deepEqual(
    tr.maker_orders.map((m) => [m.order_id, m.matched_amount, m.price]),
    [
      [a2.hash, 3n * U, 500_000],
      [a3.hash, 4n * U, 500_000],
      [a1.hash, 2n * U, 520_000],
    ],
  );
  // fee = 1% × min(p, 1 − p) × size per leg: 0.01 × 0.48 × 2 + 0.01 × 0.5 × 7 = 0.0096 + 0.035
  t.is(tr.fee, 44_600n);
  t.is(tr.notional, 3_500_000n + 1_040_000n);
  t.like(r.reply, {
    status: 'matched',
    makingAmount: 4_540_000n,
    takingAmount: 9n * U,
    tradeIDs: ['T1'],
    sizeMatched: 9n * U,
    remaining: 0n,
    fee: 44_600n,
  });
  t.like(r.events[0] as any, {
    status: 'MATCHED',
    order: { sizeMatched: 9n * U, remaining: 0n },
    release: { owner: 'tk', asset: 'collateral', amount: 4_950_000n },
  });
  t.like(getOrder(b.s, a1.hash), { remainingSize: 3n * U });
  t.is(getOrder(b.s, a2.hash), null);
  t.is(getOrder(b.s, taker.hash), null);
  t.like(lastTrade(b.s), { asset_id: YES, price: 520_000, size: 9n * U, side: 'BUY' });
  t.deepEqual(checkBook(b.s, { mintMerge: true }), []);
});

test('partial fill: the rest rests, maker updates carry cumulative size and the release', (t) => {
  const b = book();
  const bid = order('m', 'YES', 'BUY', 0.4, 10);
  place(b, bid);
  const r = place(b, order('tk', 'YES', 'SELL', 0.3, 4));
  const upd = r.events.find((e) => e.type === 'OrderUpdated') as any;
  t.like(upd, {
    orderId: bid.hash,
    matched: 4n * U,
    sizeMatched: 4n * U,
    remaining: 6n * U,
    status: 'LIVE',
    release: { owner: 'm', asset: 'collateral', amount: 1_600_000n },
  });
  t.like(r.reply, { status: 'matched', makingAmount: 4n * U, takingAmount: 1_600_000n });
  const r2 = place(b, order('tk2', 'YES', 'SELL', 0.4, 10));
  t.like(r2.reply, { status: 'matched', sizeMatched: 6n * U, remaining: 4n * U });
  t.like(bestBidAsk(b.s, YES), { bid: null, ask: { price: 400_000, size: 4n * U } });
});

const legs = (r: { events: BookEvent[] }) => trades(r.events).map((x) => [x.id, x.match_type, x.maker_orders.map((m) => m.order_id)]);
const takerReleases = (r: { events: BookEvent[] }, hash: string) =>
  r.events
    .filter(
      (e: any) =>
        (e.type === 'OrderPlaced' && e.order.hash === hash) ||
        ((e.type === 'OrderCancelled' || e.type === 'OrderEjected') && e.orderId === hash),
    )
    .reduce((a, e: any) => a + e.release.amount, 0n);

test('the distortion bound stops a sweep; the remainder rests (the book rests crossed beyond the bound)', (t) => {
  const b = book();
  for (const p of [0.5, 0.51, 0.52, 0.53, 0.6]) place(b, order('m', 'YES', 'SELL', p, 1));
  const taker = order('tk', 'YES', 'BUY', 0.7, 10);
  const r = place(b, taker, { distortionBound: 20_000 });
  t.deepEqual(
    trades(r.events)[0].maker_orders.map((m) => m.price),
    [500_000, 510_000, 520_000],
  );
  t.deepEqual(types(r.events), ['OrderPlaced', 'TradeMatched', 'OrderUpdated', 'OrderUpdated', 'OrderUpdated'], 'no OrderCancelled');
  t.like(r.events[0] as any, { status: 'LIVE', order: { sizeMatched: 3n * U, remaining: 7n * U }, release: { amount: 2_100_000n } });
  t.like(r.reply, { status: 'matched', sizeMatched: 3n * U, remaining: 7n * U });
  t.like(getOrder(b.s, taker.hash), { status: 'LIVE', remainingSize: 7n * U, price: 700_000 });
  t.deepEqual(
    bestBidAsk(b.s, YES),
    { bid: { price: 700_000, size: 7n * U }, ask: { price: 530_000, size: 1n * U } },
    'crossed at rest: bid above ask',
  );
  t.deepEqual(checkBook(b.s, { mintMerge: true, crossed: 'any' }), []);
  t.is(checkBook(b.s, { mintMerge: true }).length, 1, 'two owners cross: only the bound allows it');
  // the crossed book still trades: a seller meets the best bid first
  const s = place(b, order('x', 'YES', 'SELL', 0.6, 7));
  t.like(trades(s.events)[0], { price: 700_000, size: 7n * U });
  t.is(getOrder(b.s, taker.hash), null);
  t.deepEqual(checkBook(b.s, { mintMerge: true }), []);
});

test("the distortion bound: the reference is the best opposite price on arrival, the taker's own orders included (and the MINT source with mint/merge)", (t) => {
  const mk = () => {
    const b = book();
    const own = order('alice', 'YES', 'SELL', 0.5, 1);
    place(b, own);
    for (const p of [0.51, 0.52, 0.53]) place(b, order('bob', 'YES', 'SELL', p, 1));
    return b;
  };
  const b = mk();
  const r = place(b, order('ALICE', 'YES', 'BUY', 0.6, 4), { distortionBound: 20_000 });
  t.deepEqual(
    trades(r.events)[0].maker_orders.map((m) => m.price),
    [510_000, 520_000],
    'reference 0.50 (own): 0.53 lies beyond 0.52',
  );
  t.like(r.reply, { status: 'matched', sizeMatched: 2n * U, remaining: 2n * U });
  t.deepEqual(checkBook(b.s, { mintMerge: true, crossed: 'any' }), [], 'crossed against its own ask and beyond the bound');
  // the best effective price over both sources: alice's NO bid at 0.50 is a YES ask at 0.50
  const mm = () => {
    const x = book();
    place(x, order('alice', 'NO', 'BUY', 0.5, 1));
    for (const p of [0.51, 0.52, 0.53]) place(x, order('bob', 'YES', 'SELL', p, 1));
    return x;
  };
  const on = place(mm(), order('alice', 'YES', 'BUY', 0.6, 3), { distortionBound: 20_000 });
  t.deepEqual(
    trades(on.events)[0].maker_orders.map((m) => m.price),
    [510_000, 520_000],
  );
  const off = place(mm(), order('alice', 'YES', 'BUY', 0.6, 3), { distortionBound: 20_000, mintMerge: false });
  t.deepEqual(
    trades(off.events)[0].maker_orders.map((m) => m.price),
    [510_000, 520_000, 530_000],
    'without mint/merge the NO bid is no source: reference 0.51',
  );
  // a SELL likewise: own bid at 0.50, others at 0.49 … 0.47
  const c = book();
  place(c, order('alice', 'YES', 'BUY', 0.5, 1));
  for (const p of [0.49, 0.48, 0.47]) place(c, order('bob', 'YES', 'BUY', p, 1));
  const sell = place(c, order('alice', 'YES', 'SELL', 0.4, 3), { distortionBound: 20_000 });
  t.deepEqual(
    trades(sell.events)[0].maker_orders.map((m) => m.price),
    [490_000, 480_000],
  );
});

test('the maker cap splits the execution into more trades, it never stops the sweep: ids <tradeId>, :1, :2 … in the order opened', (t) => {
  const b = book();
  const asks = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'].map((m, i) => order(m, 'YES', 'SELL', i < 4 ? 0.5 : 0.51, 1));
  for (const o of asks) place(b, o);
  const taker = order('tk', 'YES', 'BUY', 0.7, 10);
  const r = place(b, taker, { maxMakersPerTrade: 3, tradeId: 'T' });
  t.deepEqual(
    legs(r),
    [
      ['T', 'COMPLEMENTARY', asks.slice(0, 3).map((o) => o.hash)],
      ['T:1', 'COMPLEMENTARY', asks.slice(3, 6).map((o) => o.hash)],
      ['T:2', 'COMPLEMENTARY', [asks[6].hash]],
    ],
    'price-time priority across the trades',
  );
  t.deepEqual(types(r.events), [
    'OrderPlaced',
    'TradeMatched',
    'OrderUpdated',
    'OrderUpdated',
    'OrderUpdated',
    'TradeMatched',
    'OrderUpdated',
    'OrderUpdated',
    'OrderUpdated',
    'TradeMatched',
    'OrderUpdated',
  ]);
  t.deepEqual(
    r.events.filter((e) => e.type === 'OrderUpdated').map((e: any) => e.tradeId),
    ['T', 'T', 'T', 'T:1', 'T:1', 'T:1', 'T:2'],
  );
  t.like(r.reply, { status: 'matched', sizeMatched: 7n * U, remaining: 3n * U, tradeIDs: ['T', 'T:1', 'T:2'], makingAmount: 3_530_000n });
  t.deepEqual((r.events[0] as any).tradeIds, ['T', 'T:1', 'T:2']);
  t.deepEqual(
    trades(r.events).map((x) => [x.size, x.price, x.notional]),
    [
      [3n * U, 500_000, 1_500_000n],
      [3n * U, 510_000, 1_520_000n],
      [1n * U, 510_000, 510_000n],
    ],
  );
  t.like(bestBidAsk(b.s, YES), { bid: { price: 700_000, size: 3n * U }, ask: null });
  t.is(takerReleases(r, taker.hash), 7n * U - 2_100_000n, 'the fills release what they consumed; the remainder keeps 0.7 × 3');
  t.deepEqual(checkBook(b.s, { mintMerge: true }), []);
  // without a tradeId: t-<hash>, t-<hash>:1, …
  const c = book();
  for (const m of ['m8', 'm9']) place(c, order(m, 'YES', 'SELL', 0.5, 1));
  const d = order('tk2', 'YES', 'BUY', 0.5, 2);
  t.deepEqual(place(c, d, { maxMakersPerTrade: 1 }).reply.tradeIDs, [`t-${d.hash}`, `t-${d.hash}:1`]);
});

test('the maker cap: a FOK the book can fill is filled across several trades; GTD is split like GTC; a bad cap is refused', (t) => {
  const b = book();
  const asks = ['m1', 'm2', 'm3', 'm4'].map((m) => order(m, 'YES', 'SELL', 0.5, 1));
  for (const o of asks) place(b, o);
  t.deepEqual(place(b, order('tk', 'YES', 'BUY', 0.5, 1, { orderType: 'FOK' }), { maxMakersPerTrade: 0 }).reply, {
    error: 'INVALID_COMMAND',
    message: 'maxMakersPerTrade must be a positive integer',
  });
  const fok = place(b, order('tk', 'YES', 'BUY', 0.5, 4, { orderType: 'FOK' }), { maxMakersPerTrade: 3, tradeId: 'F' });
  t.like(fok.reply, { status: 'matched', sizeMatched: 4n * U, remaining: 0n, tradeIDs: ['F', 'F:1'] });
  t.deepEqual(
    trades(fok.events).map((x) => x.maker_orders.length),
    [3, 1],
  );
  place(b, order('m5', 'YES', 'SELL', 0.5, 1));
  const snap = toSnapshot(b.s);
  t.deepEqual(
    place(b, order('tk', 'YES', 'BUY', 0.5, 2, { orderType: 'FOK' }), { maxMakersPerTrade: 1 }),
    { events: [], reply: { error: 'FOK_NOT_FILLED', message: 'the book cannot fill the whole order now' } },
    'a FOK the book cannot fill still fails',
  );
  t.deepEqual(toSnapshot(b.s), snap, 'nothing changed');
  place(b, order('m6', 'YES', 'SELL', 0.5, 1));
  const gtd = place(b, order('tk2', 'YES', 'BUY', 0.5, 3, { orderType: 'GTD', expiration: 5000 }), { maxMakersPerTrade: 1, tradeId: 'G' });
  t.like(gtd.reply, { status: 'matched', sizeMatched: 2n * U, remaining: 1n * U, tradeIDs: ['G', 'G:1'] });
  t.false(gtd.events.some((e) => e.type === 'OrderCancelled'));
  t.deepEqual(checkBook(b.s, { mintMerge: true }), []);
});

test('the maker cap counts per trade: each match type up to its cap, then a new trade of that type; never a maker skipped', (t) => {
  const mk = () => {
    const b = book();
    // effective YES asks at 0.50 in booking order: a1 (ask), n1 (NO bid: MINT), a2, n2, a3
    const os = [
      order('a1', 'YES', 'SELL', 0.5, 1),
      order('n1', 'NO', 'BUY', 0.5, 1),
      order('a2', 'YES', 'SELL', 0.5, 1),
      order('n2', 'NO', 'BUY', 0.5, 1),
      order('a3', 'YES', 'SELL', 0.5, 1),
    ];
    for (const o of os) place(b, o);
    return { b, os };
  };
  const { b, os } = mk();
  const r = place(b, order('tk', 'YES', 'BUY', 0.5, 5), { maxMakersPerTrade: 2, tradeId: 'T' });
  t.deepEqual(legs(r), [
    ['T', 'COMPLEMENTARY', [os[0].hash, os[2].hash]],
    ['T:1', 'MINT', [os[1].hash, os[3].hash]],
    ['T:2', 'COMPLEMENTARY', [os[4].hash]],
  ]);
  t.like(r.reply, { status: 'matched', sizeMatched: 5n * U, remaining: 0n, tradeIDs: ['T', 'T:1', 'T:2'] });
  t.is(getOrder(b.s, os[4].hash), null);
  // cap 1: every maker opens a trade, in fill order
  const x = mk();
  const r2 = place(x.b, order('tk', 'YES', 'BUY', 0.5, 5), { maxMakersPerTrade: 1, tradeId: 'U' });
  t.deepEqual(legs(r2), [
    ['U', 'COMPLEMENTARY', [x.os[0].hash]],
    ['U:1', 'MINT', [x.os[1].hash]],
    ['U:2', 'COMPLEMENTARY', [x.os[2].hash]],
    ['U:3', 'MINT', [x.os[3].hash]],
    ['U:4', 'COMPLEMENTARY', [x.os[4].hash]],
  ]);
  t.deepEqual(checkBook(x.b.s, { mintMerge: true }), []);
  // below the caps the ids are as they always were: <tradeId> for the first trade, :1 for the other type
  const y = mk();
  t.deepEqual(legs(place(y.b, order('tk', 'YES', 'BUY', 0.5, 5), { maxMakersPerTrade: 3, tradeId: 'V' })), [
    ['V', 'COMPLEMENTARY', [y.os[0].hash, y.os[2].hash, y.os[4].hash]],
    ['V:1', 'MINT', [y.os[1].hash, y.os[3].hash]],
  ]);
});

test('separate caps: maxMakersPerMintMergeTrade bounds each MINT (or MERGE) trade, maxMakersPerTrade each COMPLEMENTARY one; absent, the one cap is both', (t) => {
  const mk = () => {
    const b = book();
    // effective YES asks at 0.50 in booking order: n1, n2, n3 (NO bids: MINT), then a1, a2, a3 (asks)
    const os = [
      order('n1', 'NO', 'BUY', 0.5, 1),
      order('n2', 'NO', 'BUY', 0.5, 1),
      order('n3', 'NO', 'BUY', 0.5, 1),
      order('a1', 'YES', 'SELL', 0.5, 1),
      order('a2', 'YES', 'SELL', 0.5, 1),
      order('a3', 'YES', 'SELL', 0.5, 1),
    ];
    for (const o of os) place(b, o);
    return { b, os };
  };
  const kinds = (r: { events: BookEvent[] }) => trades(r.events).map((x) => [x.match_type, x.maker_orders.map((m) => m.order_id)]);
  // MINT trades capped at 2: n1 n2 | n3, then one COMPLEMENTARY trade of 3
  const a = mk();
  const r = place(a.b, order('tk', 'YES', 'BUY', 0.5, 6), { maxMakersPerTrade: 3, maxMakersPerMintMergeTrade: 2 });
  t.deepEqual(kinds(r), [
    ['MINT', [a.os[0].hash, a.os[1].hash]],
    ['MINT', [a.os[2].hash]],
    ['COMPLEMENTARY', a.os.slice(3).map((o) => o.hash)],
  ]);
  t.like(r.reply, { status: 'matched', sizeMatched: 6n * U, remaining: 0n });
  // MINT allowed 3, COMPLEMENTARY 2
  const c = mk();
  const r2 = place(c.b, order('tk', 'YES', 'BUY', 0.5, 6), { maxMakersPerTrade: 2, maxMakersPerMintMergeTrade: 3 });
  t.deepEqual(kinds(r2), [
    ['MINT', c.os.slice(0, 3).map((o) => o.hash)],
    ['COMPLEMENTARY', [c.os[3].hash, c.os[4].hash]],
    ['COMPLEMENTARY', [c.os[5].hash]],
  ]);
  // a command without maxMakersPerMintMergeTrade (from before it): one cap for both
  const d = mk();
  t.deepEqual(kinds(place(d.b, order('tk', 'YES', 'BUY', 0.5, 6), { maxMakersPerTrade: 2 })), [
    ['MINT', [d.os[0].hash, d.os[1].hash]],
    ['MINT', [d.os[2].hash]],
    ['COMPLEMENTARY', [d.os[3].hash, d.os[4].hash]],
    ['COMPLEMENTARY', [d.os[5].hash]],
  ]);
  t.deepEqual(place(mk().b, order('tk', 'YES', 'BUY', 0.5, 1), { maxMakersPerMintMergeTrade: 0 }).reply, {
    error: 'INVALID_COMMAND',
    message: 'maxMakersPerMintMergeTrade must be a positive integer',
  });
  // held: both caps kept (also across a snapshot); an OrderDelayed from before the field keeps one cap for both
  const h = book({ start_time: 100_000, delay_ms: 10_000 });
  const held = order('tk', 'YES', 'BUY', 0.5, 3);
  t.like(place(h, held, { now: 95_000, maxMakersPerTrade: 4, maxMakersPerMintMergeTrade: 1 }).events[0] as any, {
    type: 'OrderDelayed',
    maxMakersPerTrade: 4,
    maxMakersPerMintMergeTrade: 1,
  });
  const hs = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(h.s))));
  t.like(hs.held.get(held.hash)!, { maxMakersPerTrade: 4, maxMakersPerMintMergeTrade: 1 });
  const old = D.evolve(D.initial(MKT), {
    ...(place(book({ start_time: 100_000, delay_ms: 10_000 }), order('tk', 'YES', 'BUY', 0.5, 3), { now: 95_000, maxMakersPerTrade: 2 })
      .events[0] as any),
    maxMakersPerMintMergeTrade: undefined,
  });
  t.like([...old.held.values()][0], { maxMakersPerTrade: 2, maxMakersPerMintMergeTrade: 2 });
  const oldSnap = toSnapshot(old) as any;
  delete oldSnap.held[0].maxMakersPerMintMergeTrade;
  t.like([...fromSnapshot(JSON.parse(JSON.stringify(oldSnap))).held.values()][0], { maxMakersPerTrade: 2, maxMakersPerMintMergeTrade: 2 });
  t.deepEqual(checkBook(c.b.s, { mintMerge: true }), []);
});

test('a delayed order keeps its maker cap (also across a snapshot) and is matched with it at release', (t) => {
  const b = book({ start_time: 100_000, delay_ms: 10_000 });
  const held = order('tk', 'YES', 'BUY', 0.5, 3);
  const r = place(b, held, { now: 95_000, maxMakersPerTrade: 2, tradeId: 'H' });
  t.like(r.events[0] as any, { type: 'OrderDelayed', maxMakersPerTrade: 2 });
  for (const m of ['m1', 'm2', 'm3']) place(b, order(m, 'YES', 'SELL', 0.5, 1), { now: 100_000 });
  const s2 = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(b.s))));
  t.is(s2.held.get(held.hash)!.maxMakersPerTrade, 2);
  const again = D.decide(s2, { type: 'ReleaseDelayed', now: 100_000 });
  const out = b.send({ type: 'ReleaseDelayed', now: 100_000 });
  t.deepEqual(again, out, 'the restored state decides the same');
  t.like(out.reply.replies[held.hash], { status: 'matched', sizeMatched: 3n * U, remaining: 0n, tradeIDs: ['H', 'H:1'] });
  t.deepEqual(
    trades(out.events).map((x) => x.maker_orders.length),
    [2, 1],
  );
  t.false(out.events.some((e) => e.type === 'OrderCancelled'));
});

test('FOK: all or nothing', (t) => {
  const b = book();
  place(b, order('m', 'YES', 'SELL', 0.5, 3));
  const no = place(b, order('tk', 'YES', 'BUY', 0.5, 4, { orderType: 'FOK' }));
  t.deepEqual(no, { events: [], reply: { error: 'FOK_NOT_FILLED', message: 'the book cannot fill the whole order now' } });
  t.like(place(b, order('tk', 'YES', 'BUY', 0.5, 3, { orderType: 'FOK' })).reply, { status: 'matched', sizeMatched: 3n * U });
});

test('self-trades are filtered: own orders are skipped, neither filled nor cancelled; the remainder rests against them', (t) => {
  const b = book();
  const own = order('Alice', 'YES', 'SELL', 0.5, 2);
  const other = order('bob', 'YES', 'SELL', 0.5, 2);
  const further = order('carol', 'YES', 'SELL', 0.55, 1);
  place(b, own);
  place(b, other);
  place(b, further);
  const taker = order('alice', 'YES', 'BUY', 0.6, 4);
  const r = place(b, taker);
  t.deepEqual(
    trades(r.events)[0].maker_orders.map((m) => m.order_id),
    [other.hash, further.hash],
    'past its own ask, on to the next level',
  );
  t.like(getOrder(b.s, own.hash), { remainingSize: 2n * U });
  t.deepEqual(types(r.events), ['OrderPlaced', 'TradeMatched', 'OrderUpdated', 'OrderUpdated'], 'no OrderCancelled');
  t.like(r.reply, { status: 'matched', sizeMatched: 3n * U, remaining: 1n * U });
  t.like(getOrder(b.s, taker.hash), { status: 'LIVE', remainingSize: 1n * U });
  t.deepEqual(
    bestBidAsk(b.s, YES),
    { bid: { price: 600_000, size: 1n * U }, ask: { price: 500_000, size: 2n * U } },
    'crossed at rest against its own ask',
  );
  // nothing to fill but its own: rests, status live (as any resting order)
  const alone = place(b, order('ALICE', 'YES', 'BUY', 0.7, 1));
  t.like(alone.reply, { status: 'live', tradeIDs: [], sizeMatched: 0n, remaining: 1n * U });
  t.deepEqual(types(alone.events), ['OrderPlaced']);
  t.deepEqual(checkBook(b.s, { mintMerge: true }), [], "crossed only by one owner's orders");
  // another taker meets the crossed book as it is: the best bid (alice's 0.70) first
  const sell = place(b, order('dave', 'YES', 'SELL', 0.6, 2));
  t.deepEqual(
    trades(sell.events)[0].maker_orders.map((m) => m.price),
    [700_000, 600_000],
  );
  t.deepEqual(checkBook(b.s, { mintMerge: true }), []);
});

test("self-trades with mint/merge: the taker's own NO bid (a YES ask) is skipped and the remainder rests against it", (t) => {
  const b = book();
  place(b, order('alice', 'NO', 'BUY', 0.5, 1));
  const r = place(b, order('alice', 'YES', 'BUY', 0.6, 1));
  t.like(r.reply, { status: 'live', remaining: 1n * U });
  t.deepEqual(checkBook(b.s, { mintMerge: true }), []);
  t.deepEqual(bestBidAsk(b.s, YES, { mintMerge: true }), { bid: { price: 600_000, size: 1n * U }, ask: { price: 500_000, size: 1n * U } });
  // bob's YES SELL at 0.55 meets alice's YES bid at 0.60 first
  const s = place(b, order('bob', 'YES', 'SELL', 0.55, 1));
  t.like(trades(s.events)[0], { match_type: 'COMPLEMENTARY', price: 600_000 });
});

test('fees: a marketable order below the taker fee is refused; a resting one is not', (t) => {
  const b = book({ taker_fee_bps: 200 });
  t.is(place(b, order('m', 'YES', 'SELL', 0.8, 5)).reply.status, 'live');
  t.deepEqual(place(b, order('tk', 'YES', 'BUY', 0.8, 1, { feeRateBps: 100 })).reply, {
    error: 'FEE_RATE_TOO_LOW',
    message: 'an order marketable on arrival must carry feeRateBps >= 200',
  });
  const r = place(b, order('tk', 'YES', 'BUY', 0.8, 5, { feeRateBps: 200 }));
  t.is(trades(r.events)[0].fee, 20_000n, '2% × min(0.8, 0.2) × 5');
});

test('MINT: a YES buyer crosses a NO buyer when p + q >= 1; off without mint/merge', (t) => {
  const b = book();
  const noBid = order('m', 'NO', 'BUY', 0.45, 5);
  place(b, noBid);
  t.is(place(b, order('x', 'YES', 'BUY', 0.5, 1)).reply.status, 'live', '0.50 + 0.45 < 1');
  t.is(place(b, order('y', 'YES', 'BUY', 0.6, 1), { mintMerge: false }).reply.status, 'live', 'mint/merge off');
  const b2 = book();
  place(b2, noBid);
  const r = place(b2, order('tk', 'YES', 'BUY', 0.6, 2));
  const [tr] = trades(r.events);
  t.like(tr, { match_type: 'MINT', price: 550_000, size: 2n * U, notional: 1_100_000n });
  t.like(tr.maker_orders[0], { order_id: noBid.hash, price: 450_000, outcome: 'NO', side: 'BUY', asset_id: NO });
  t.like(r.reply, { makingAmount: 1_100_000n, takingAmount: 2n * U });
});

test('MERGE: a YES seller crosses a NO seller when p + q <= 1', (t) => {
  const b = book();
  const noAsk = order('m', 'NO', 'SELL', 0.55, 5);
  place(b, noAsk);
  t.is(place(b, order('x', 'YES', 'SELL', 0.5, 1)).reply.status, 'live', '0.50 + 0.55 > 1');
  const b2 = book();
  place(b2, noAsk);
  const r = place(b2, order('tk', 'YES', 'SELL', 0.4, 3));
  t.like(trades(r.events)[0], { match_type: 'MERGE', price: 450_000, size: 3n * U, side: 'SELL' });
  t.like(r.reply, { makingAmount: 3n * U, takingAmount: 1_350_000n });
  t.deepEqual(checkBook(b2.s, { mintMerge: true }), []);
});

test('a sweep mixing both sources: best effective price first, time priority inside a level, one trade per match type', (t) => {
  const b = book();
  const noBid = order('m1', 'NO', 'BUY', 0.5, 1); // a YES ask at 0.50, earlier
  const yesAsk = order('m2', 'YES', 'SELL', 0.5, 1);
  const yesAsk2 = order('m3', 'YES', 'SELL', 0.49, 1);
  for (const o of [noBid, yesAsk, yesAsk2]) place(b, o);
  const r = place(b, order('tk', 'YES', 'BUY', 0.5, 3), { tradeId: 'T' });
  const ts = trades(r.events);
  t.deepEqual(
    ts.map((x) => [x.id, x.match_type, x.maker_orders.map((m) => m.order_id)]),
    [
      ['T', 'COMPLEMENTARY', [yesAsk2.hash, yesAsk.hash]],
      ['T:1', 'MINT', [noBid.hash]],
    ],
  );
  t.deepEqual(r.reply.tradeIDs, ['T', 'T:1']);
  t.deepEqual((r.events[0] as any).tradeIds, ['T', 'T:1']);
});

test('cancel: every reason, case-insensitive owners, all and by asset', (t) => {
  const b = book();
  const a = order('Alice', 'YES', 'BUY', 0.3, 2);
  const a2 = order('Alice', 'NO', 'BUY', 0.3, 2);
  const a3 = order('Alice', 'YES', 'SELL', 0.9, 2);
  const bob = order('bob', 'YES', 'BUY', 0.2, 2);
  const filled = order('alice', 'YES', 'SELL', 0.6, 1);
  for (const o of [a, a2, a3, bob, filled]) place(b, o);
  place(b, order('carol', 'YES', 'BUY', 0.6, 1));
  const r = b.send({ type: 'CancelOrders', owner: 'ALICE', orderIds: [a.hash, bob.hash, filled.hash, '0xnope', a.hash], now: 2000 });
  t.deepEqual(r.reply, {
    canceled: [a.hash],
    not_canceled: { [bob.hash]: 'not yours', [filled.hash]: 'already filled', '0xnope': 'order not found' },
  });
  t.like(r.events[0] as any, {
    type: 'OrderCancelled',
    orderId: a.hash,
    reason: 'user',
    release: { owner: 'Alice', asset: 'collateral', amount: 600_000n },
  });
  t.deepEqual(b.send({ type: 'CancelOrders', owner: 'alice', orderIds: [a.hash], now: 2001 }).reply.not_canceled, {
    [a.hash]: 'already cancelled',
  });
  t.deepEqual(b.send({ type: 'CancelOrders', owner: 'alice', assetId: NO, now: 2002 }).reply, { canceled: [a2.hash], not_canceled: {} });
  t.deepEqual(b.send({ type: 'CancelOrders', owner: 'alice', all: true, now: 2003 }).reply, { canceled: [a3.hash], not_canceled: {} });
  t.deepEqual(ordersOf(b.s, 'alice'), []);
  t.is(ordersOf(b.s, 'BOB').length, 1);
  t.deepEqual(checkBook(b.s), []);
});

test('cancel with releaseTo: the freeing of the holds goes on to the wallet with the answer; without, or too big, the book answers', (t) => {
  const b = book();
  const a = order('Alice', 'YES', 'BUY', 0.3, 2);
  const a2 = order('Alice', 'NO', 'BUY', 0.3, 2);
  for (const o of [a, a2]) place(b, o);
  const r = b.send({ type: 'CancelOrders', owner: 'Alice', orderIds: [a.hash, '0xnope'], now: 2000, releaseTo: 'p.wallet.commands' });
  const answer = { canceled: [a.hash], not_canceled: { '0xnope': 'order not found' } };
  t.deepEqual(r.reply, answer);
  t.deepEqual(r.forward, {
    topic: 'p.wallet.commands',
    key: 'Alice',
    id: `cancel-release:${a.hash}`,
    cmd: { type: 'ReleaseOrders', orderIds: [a.hash], reason: 'canceled', answer: { ...answer, released: true } },
  });
  t.like(r.events[0] as any, { type: 'OrderCancelled', orderId: a.hash, walletReleased: true });
  // Nothing cancelled: nothing to free, the book answers.
  const none = b.send({ type: 'CancelOrders', owner: 'Alice', orderIds: [a.hash], now: 2001, releaseTo: 'p.wallet.commands' });
  t.is(none.forward, undefined);
  // No releaseTo: the book answers, and the event carries no mark (the ledger releases the order).
  const plain = b.send({ type: 'CancelOrders', owner: 'Alice', all: true, now: 2002 });
  t.deepEqual(plain.reply.canceled, [a2.hash]);
  t.is(plain.forward, undefined);
  t.is((plain.events[0] as any).walletReleased, undefined);
  // More ids than a forward carries: the book answers.
  const many = [a.hash, ...Array.from({ length: RELEASE_FORWARD_MAX }, (_, i) => `0x${String(i).padStart(64, '0')}`)];
  const b2 = book();
  place(b2, a);
  const big = b2.send({ type: 'CancelOrders', owner: 'Alice', orderIds: many, now: 2003, releaseTo: 'p.wallet.commands' });
  t.deepEqual(big.reply.canceled, [a.hash]);
  t.is(big.forward, undefined);
  t.deepEqual(checkBook(b.s), []);
});

test('invalidation after a failed settlement releases what the order still holds', (t) => {
  const b = book();
  const bid = order('m', 'YES', 'BUY', 0.33, 3);
  place(b, bid);
  place(b, order('tk', 'YES', 'SELL', 0.33, 1));
  const r = b.send({ type: 'InvalidateOrders', orderIds: [bid.hash, '0xgone'], reason: 'settlement failed', tradeId: 'T9', now: 3000 });
  t.deepEqual(r.reply, { invalidated: [bid.hash], not_found: ['0xgone'] });
  t.like(r.events[0] as any, { type: 'OrderInvalidated', tradeId: 'T9', sizeMatched: 1n * U, release: { amount: 660_000n } });
  t.deepEqual(b.send({ type: 'CancelOrders', owner: 'm', orderIds: [bid.hash], now: 3001 }).reply.not_canceled, {
    [bid.hash]: 'already cancelled',
  });
});

test('BUY releases sum to the reservation over any sequence of partial fills (rounding up the remainder)', (t) => {
  const b = book({ tick_size: '0.001', min_size: '0' });
  const bid = order('m', 'YES', 'BUY', 0.333, 1);
  place(b, bid);
  let released = 0n;
  for (let i = 0; i < 3; i++) {
    const r = place(b, order(`t${i}`, 'YES', 'SELL', 0.333, 0.3));
    released += r.events.filter((e) => e.type === 'OrderUpdated').reduce((a, e: any) => a + e.release.amount, 0n);
  }
  released += b.send({ type: 'CancelOrders', owner: 'm', all: true, now: 5000 }).events.reduce((a, e: any) => a + e.release.amount, 0n);
  t.is(released, reservationOf(bid).amount);
  t.is(released, 333_000n);
});

test('Expire ejects orders whose expiration passed; StartGame ejects what rested before the start', (t) => {
  const b = book({ start_time: 100_000 });
  const gtd = order('a', 'YES', 'BUY', 0.3, 1, { orderType: 'GTD', expiration: 50 });
  const gtc = order('a', 'YES', 'BUY', 0.2, 1);
  place(b, gtd);
  place(b, gtc);
  t.deepEqual(b.send({ type: 'Expire', now: 49_999 }).reply, { ejected: [] });
  const ex = b.send({ type: 'Expire', now: 50_000 });
  t.deepEqual(ex.reply, { ejected: [gtd.hash] });
  t.like(ex.events[0] as any, { type: 'OrderEjected', reason: 'expired', release: { amount: 300_000n } });
  t.deepEqual(b.send({ type: 'StartGame', now: 99_999 }).reply, { ejected: [] }, 'not started yet');
  const sg = b.send({ type: 'StartGame', now: 100_000 });
  t.deepEqual(sg.reply, { ejected: [gtc.hash] });
  t.like(sg.events[0] as any, { reason: 'game_start' });
  const late = order('b', 'YES', 'BUY', 0.1, 1);
  place(b, late, { now: 100_500 });
  t.deepEqual(b.send({ type: 'StartGame', now: 101_000 }).reply, { ejected: [] }, 'booked after the start: stays');
  t.deepEqual(
    ordersOf(b.s, 'b').map((o) => o.orderHash),
    [late.hash],
  );
});

test('a PlaceOrder ejects expired makers first (the events Expire emits), and the taker never fills them; Expire afterwards is a no-op', (t) => {
  const b = book();
  const gtd = order('m', 'YES', 'SELL', 0.5, 1, { orderType: 'GTD', expiration: 50 });
  const gtd2 = order('m2', 'YES', 'SELL', 0.52, 1, { expiration: 50 }); // a GTC carrying an expiration: ejected too
  const gtc = order('n', 'YES', 'SELL', 0.55, 2);
  for (const o of [gtd, gtd2, gtc]) place(b, o);
  const expire = D.decide(b.s, { type: 'Expire', now: 50_000 });
  // a FOK it cannot fill once they are gone: rejected, nothing ejected (the clock will)
  t.deepEqual(place(b, order('tk', 'YES', 'BUY', 0.6, 3, { orderType: 'FOK' }), { now: 50_000 }).events, []);
  t.like(getOrder(b.s, gtd.hash), { status: 'LIVE' });
  const taker = order('tk', 'YES', 'BUY', 0.6, 3);
  const r = place(b, taker, { now: 50_000, distortionBound: 20_000 });
  t.deepEqual(types(r.events), ['OrderEjected', 'OrderEjected', 'OrderPlaced', 'TradeMatched', 'OrderUpdated']);
  t.deepEqual(r.events.slice(0, 2), expire.events, 'the same events as Expire at that time');
  t.like(r.events[0] as any, { orderId: gtd.hash, reason: 'expired', release: { owner: 'm', asset: YES, amount: 1n * U } });
  t.deepEqual(
    trades(r.events)[0].maker_orders.map((m) => m.order_id),
    [gtc.hash],
    'the reference is 0.55: the expired 0.50 is not on the book',
  );
  t.like(r.reply, { status: 'matched', sizeMatched: 2n * U, remaining: 1n * U });
  t.is(getOrder(b.s, gtd.hash), null);
  t.deepEqual(b.send({ type: 'Expire', now: 50_001 }), { events: [], reply: { ejected: [] } });
  t.deepEqual(checkBook(b.s, { mintMerge: true, now: 50_000 }), []);
  // one second earlier nothing is due
  const c = book();
  const early = order('m', 'YES', 'SELL', 0.5, 1, { orderType: 'GTD', expiration: 50 });
  place(c, early);
  const r2 = place(c, order('tk', 'YES', 'BUY', 0.5, 1), { now: 49_999 });
  t.deepEqual(
    trades(r2.events)[0].maker_orders.map((m) => m.order_id),
    [early.hash],
  );
});

test('at or after the start a PlaceOrder first does what StartGame does (expired ones as Expire); StartGame afterwards is a no-op', (t) => {
  const b = book({ start_time: 100_000 });
  const pre = order('m', 'YES', 'SELL', 0.5, 1);
  const preGtd = order('m2', 'YES', 'SELL', 0.5, 1, { orderType: 'GTD', expiration: 100 });
  const otherSide = order('m3', 'NO', 'BUY', 0.2, 1);
  for (const o of [pre, preGtd, otherSide]) place(b, o, { now: 90_000 });
  const x = order('x', 'YES', 'BUY', 0.1, 1);
  t.is(place(b, x, { now: 99_999 }).events.length, 1, 'before the start nothing is due');
  const s0 = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(b.s))));
  const expire = D.decide(s0, { type: 'Expire', now: 100_000 });
  for (const e of expire.events) D.evolve(s0, e);
  const start = D.decide(s0, { type: 'StartGame', now: 100_000 });
  const taker = order('tk', 'YES', 'BUY', 0.5, 1);
  const r = place(b, taker, { now: 100_000 });
  t.deepEqual(r.events.slice(0, 4), [...expire.events, ...start.events], 'Expire then StartGame, in one decision');
  t.deepEqual(
    r.events.slice(0, 4).map((e: any) => [e.orderId, e.reason]),
    [
      [preGtd.hash, 'expired'],
      [pre.hash, 'game_start'],
      [otherSide.hash, 'game_start'],
      [x.hash, 'game_start'],
    ],
  );
  t.like(r.events[4] as any, { type: 'OrderPlaced', status: 'LIVE' });
  t.like(r.reply, { status: 'live', tradeIDs: [] }, 'nothing booked before the start is filled');
  t.deepEqual(
    ordersOf(b.s, 'tk').map((o) => o.orderHash),
    [taker.hash],
  );
  t.deepEqual(b.send({ type: 'StartGame', now: 100_001 }), { events: [], reply: { ejected: [] } });
  t.deepEqual(b.send({ type: 'Expire', now: 100_001 }), { events: [], reply: { ejected: [] } });
  t.deepEqual(checkBook(b.s, { now: 100_000 }), []);
  // the start moved later while orders rest: due again at the new start
  b.send({
    type: 'ConfigureMarket',
    now: 100_002,
    market: { condition_id: MKT, yes_token_id: YES, no_token_id: NO, tick_size: '0.01', min_size: '1', start_time: 200_000 },
  });
  const again = place(b, order('y', 'YES', 'SELL', 0.4, 1), { now: 200_000 });
  t.like(again.events[0] as any, { type: 'OrderEjected', orderId: taker.hash, reason: 'game_start' });
  t.like(again.reply, { status: 'live' });
});

test('ReleaseDelayed ejects what is due before placing the held orders: they never fill a maker booked before the start', (t) => {
  const b = book({ start_time: 100_000, delay_ms: 10_000 });
  const early = order('m', 'YES', 'SELL', 0.5, 1);
  place(b, early, { now: 80_000 });
  const held = order('tk', 'YES', 'BUY', 0.5, 1);
  t.is(place(b, held, { now: 95_000 }).reply.status, 'delayed');
  const rel = b.send({ type: 'ReleaseDelayed', now: 100_000 });
  t.deepEqual(types(rel.events), ['OrderEjected', 'OrderPlaced']);
  t.like(rel.events[0] as any, { orderId: early.hash, reason: 'game_start' });
  t.like(rel.reply.replies[held.hash], { status: 'live', sizeMatched: 0n });
  t.deepEqual(b.send({ type: 'StartGame', now: 100_000 }).reply, { ejected: [] });
  t.deepEqual(checkBook(b.s), []);
});

test('the due indexes survive fills, cancels and snapshots: ejections go out in booking order', (t) => {
  const b = book({ min_size: '0' });
  const gtds = Array.from({ length: 40 }, (_, i) =>
    order(`m${i}`, 'YES', 'SELL', 0.5 + (i % 5) / 100, 1, { orderType: 'GTD', expiration: 100 - (i % 7) }),
  );
  for (const o of gtds) place(b, o);
  for (let i = 0; i < 40; i += 3) b.send({ type: 'CancelOrders', owner: `m${i}`, all: true, now: 2000 });
  place(b, order('tk', 'YES', 'BUY', 0.5, 5), { now: 2000 });
  t.deepEqual(checkBook(b.s), []);
  const back = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(b.s))));
  t.deepEqual(checkBook(back), []);
  const r = place(b, order('tk2', 'YES', 'BUY', 0.1, 1), { now: 97_000 });
  t.deepEqual(
    D.decide(back, {
      type: 'PlaceOrder',
      order: order('tk2', 'YES', 'BUY', 0.1, 1, { hash: (r.events.at(-1) as any).order.hash }),
      now: 97_000,
      mintMerge: true,
      distortionBound: 1_000_000,
    }),
    r as any,
    'a restored state decides the same',
  );
  const ejected = r.events.filter((e) => e.type === 'OrderEjected').map((e: any) => e.orderId);
  const want = gtds.filter((o, i) => i % 3 !== 0 && o.expiration * 1000 <= 97_000 && getOrder(back, o.hash)).map((o) => o.hash);
  t.true(want.length > 0);
  t.deepEqual(ejected, want, 'every due order, in booking order');
  t.deepEqual(checkBook(b.s, { now: 97_000 }), []);
});

test('the start window: orders are delayed, then inserted (and matched) by ReleaseDelayed', (t) => {
  const b = book({ start_time: 100_000, delay_ms: 10_000 });
  const early = order('m', 'YES', 'SELL', 0.5, 2);
  place(b, early, { now: 80_000 });
  const held = order('tk', 'YES', 'BUY', 0.5, 1);
  const r = place(b, held, { now: 90_000, tradeId: 'TD' });
  t.like(r.reply, { status: 'delayed', orderID: held.hash, tradeIDs: [] });
  t.like(r.events[0] as any, { type: 'OrderDelayed', releaseAt: 100_000, tradeId: 'TD', reservation: { amount: 500_000n } });
  const expiring = order('x', 'YES', 'BUY', 0.4, 1, { orderType: 'GTD', expiration: 99 });
  place(b, expiring, { now: 95_000 });
  t.like(getOrder(b.s, held.hash), { status: 'DELAYED' });
  t.deepEqual(b.send({ type: 'ReleaseDelayed', now: 99_999 }).reply, { released: [], replies: {} });
  t.deepEqual(b.send({ type: 'StartGame', now: 100_000 }).reply, { ejected: [early.hash] }, 'held orders survive the start');
  const maker = order('m2', 'YES', 'SELL', 0.5, 1);
  place(b, maker, { now: 100_000 });
  const rel = b.send({ type: 'ReleaseDelayed', now: 100_000 });
  t.deepEqual(rel.reply.released, [held.hash, expiring.hash]);
  t.like(rel.reply.replies[held.hash], { status: 'matched', tradeIDs: ['TD'] });
  t.like(rel.reply.replies[expiring.hash], { error: 'ORDER_EXPIRED' });
  t.like(rel.events.at(-1) as any, {
    type: 'OrderEjected',
    reason: 'release_rejected',
    code: 'ORDER_EXPIRED',
    held: true,
    release: { amount: 400_000n },
  });
  t.is(b.s.held.size, 0);
  t.deepEqual(checkBook(b.s), []);
});

test('a delayed order can be cancelled before its release', (t) => {
  const b = book({ start_time: 100_000, delay_ms: 10_000 });
  const held = order('tk', 'NO', 'SELL', 0.5, 1);
  place(b, held, { now: 95_000 });
  const r = b.send({ type: 'CancelOrders', owner: 'tk', all: true, now: 96_000 });
  t.like(r.events[0] as any, { type: 'OrderCancelled', held: true, release: { asset: NO, amount: 1n * U } });
  t.deepEqual(b.send({ type: 'ReleaseDelayed', now: 100_000 }).events, []);
});

test('best bid/ask with and without the other outcome; last trade', (t) => {
  const b = book();
  place(b, order('a', 'YES', 'BUY', 0.4, 2));
  place(b, order('b', 'YES', 'BUY', 0.4, 3));
  place(b, order('c', 'NO', 'BUY', 0.45, 1)); // YES ask at 0.55
  place(b, order('d', 'YES', 'SELL', 0.6, 1));
  t.deepEqual(bestBidAsk(b.s, YES), { bid: { price: 400_000, size: 5n * U }, ask: { price: 600_000, size: 1n * U } });
  t.deepEqual(bestBidAsk(b.s, YES, { mintMerge: true }), { bid: { price: 400_000, size: 5n * U }, ask: { price: 550_000, size: 1n * U } });
  t.is(lastTrade(b.s), null);
});

test('a finer tick while orders rest re-files the ladders; snapshots round-trip', (t) => {
  const b = book();
  place(b, order('a', 'YES', 'BUY', 0.4, 2));
  place(b, order('b', 'YES', 'SELL', 0.6, 2));
  b.send({
    type: 'ConfigureMarket',
    now: 5,
    market: { condition_id: MKT, yes_token_id: YES, no_token_id: NO, tick_size: '0.001', min_size: '1' },
  });
  t.is(b.s.gran, 1000);
  t.is(place(b, order('c', 'YES', 'BUY', 0.405, 1)).reply.status, 'live');
  t.like(place(b, order('d', 'YES', 'SELL', 0.4, 2)).reply, { status: 'matched', sizeMatched: 2n * U });
  t.like(bestBidAsk(b.s, YES).bid, { price: 400_000, size: 1n * U });
  t.deepEqual(checkBook(b.s), []);
  const snap = JSON.parse(JSON.stringify(toSnapshot(b.s)));
  const back = fromSnapshot(snap);
  t.deepEqual(toSnapshot(back), snap);
  t.deepEqual(checkBook(back), []);
  t.deepEqual(bestBidAsk(back, YES), bestBidAsk(b.s, YES));
});

test('decide never writes the state', (t) => {
  const b = book();
  place(b, order('m', 'YES', 'SELL', 0.5, 2));
  const before = JSON.stringify(toSnapshot(b.s));
  D.decide(b.s, { type: 'PlaceOrder', order: order('tk', 'YES', 'BUY', 0.5, 1), now: 1, mintMerge: true, distortionBound: 20_000 });
  D.decide(b.s, { type: 'CancelOrders', owner: 'm', all: true, now: 1 });
  t.is(JSON.stringify(toSnapshot(b.s)), before);
});

test('the finished-order memory is bounded: the oldest are forgotten first, across snapshots too', (t) => {
  const b = book({ min_size: '0' });
  const first: string[] = [];
  for (let i = 0; i < FINISHED_CAP + 5; i++) {
    const o = order('a', 'YES', 'BUY', 0.1, 1);
    if (i < 6) first.push(o.hash);
    place(b, o);
    b.send({ type: 'CancelOrders', owner: 'a', orderIds: [o.hash], now: 2000 });
  }
  const r = b.send({ type: 'CancelOrders', owner: 'a', orderIds: first, now: 3000 });
  t.deepEqual(Object.values(r.reply.not_canceled), [
    'order not found',
    'order not found',
    'order not found',
    'order not found',
    'order not found',
    'already cancelled',
  ]);
  const back = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(b.s))));
  t.deepEqual(toSnapshot(back), toSnapshot(b.s));
  t.is(toSnapshot(back).finished.length, FINISHED_CAP);
  t.is(toSnapshot(back).finished[0][0], first[5]);
});

test('a level with many cancelled orders keeps time priority after compaction', (t) => {
  const b = book();
  const makers = Array.from({ length: 300 }, (_, i) => order(`m${i}`, 'YES', 'SELL', 0.5, 1));
  for (const o of makers) place(b, o);
  const kept = makers.filter((_, i) => i % 6 === 0);
  makers.forEach((o, i) => {
    if (i % 6 !== 0) b.send({ type: 'CancelOrders', owner: `m${i}`, orderIds: [o.hash], now: 2000 });
  });
  t.deepEqual(checkBook(b.s), []);
  const r = place(b, order('tk', 'YES', 'BUY', 0.5, 30));
  t.deepEqual(
    trades(r.events)[0].maker_orders.map((m) => m.order_id),
    kept.slice(0, 30).map((o) => o.hash),
  );
  t.deepEqual(checkBook(b.s), []);
});

test('a delayed FOK that cannot fill at its release is ejected; token ids are fixed while orders live; unknown commands', (t) => {
  const b = book({ start_time: 100_000, delay_ms: 10_000 });
  const fok = order('tk', 'YES', 'BUY', 0.5, 1, { orderType: 'FOK' });
  t.is(place(b, fok, { now: 95_000 }).reply.status, 'delayed');
  const rel = b.send({ type: 'ReleaseDelayed', now: 100_000 });
  t.like(rel.reply.replies[fok.hash], { error: 'FOK_NOT_FILLED' });
  t.like(rel.events[0] as any, { type: 'OrderEjected', reason: 'release_rejected', code: 'FOK_NOT_FILLED', release: { amount: 500_000n } });
  place(b, order('m', 'YES', 'BUY', 0.2, 1), { now: 100_001 });
  const change = b.send({ type: 'ConfigureMarket', now: 1, market: { condition_id: MKT, yes_token_id: 'Other', no_token_id: NO } });
  t.like(change.reply, { error: 'INVALID_MARKET' });
  t.like(b.send({ type: 'Bogus' } as any).reply, { error: 'INVALID_COMMAND' });
});

test('a wallet at its open-order cap in a market: GTC/GTD rejected, FOK taken, room again after a cancel or fill', (t) => {
  const b = book();
  const cap = { maxOpenOrders: 2 };
  t.is(place(b, order('alice', 'YES', 'BUY', 0.4, 1), cap).reply.status, 'live');
  t.is(place(b, order('alice', 'NO', 'BUY', 0.3, 1), cap).reply.status, 'live');
  const third = place(b, order('alice', 'YES', 'BUY', 0.41, 1), cap);
  t.is(third.reply.error, 'INVALID_ORDER');
  t.regex(third.reply.message, /already has 2 open orders in this market/);
  t.deepEqual(third.events, []);
  t.is(place(b, order('alice', 'YES', 'BUY', 0.35, 1, { orderType: 'GTD', expiration: 10_000 }), cap).reply.error, 'INVALID_ORDER');
  t.is(place(b, order('bob', 'YES', 'SELL', 0.6, 5), cap).reply.status, 'live', 'another wallet is not capped by alice');
  // A FOK never rests: taken at the cap (here it fills against bob).
  t.is(place(b, order('alice', 'YES', 'BUY', 0.6, 1, { orderType: 'FOK' }), cap).reply.status, 'matched');
  // Without the field (commands from before it): no cap.
  t.is(place(b, order('alice', 'YES', 'BUY', 0.2, 1)).reply.status, 'live');
  const mine = ordersOf(b.s, 'alice').map((o: any) => o.orderHash);
  t.is(mine.length, 3);
  b.send({ type: 'CancelOrders', owner: 'alice', orderIds: mine.slice(0, 2), now: 1001 });
  t.is(place(b, order('alice', 'YES', 'BUY', 0.21, 1), cap).reply.status, 'live', 'a cancel makes room');
  t.deepEqual(checkBook(b.s), []);
});

test('an order its wallet holds for (held): placed without a confirmation, refused with its hold returned, warnings first', (t) => {
  const b = book();
  const ok = place(b, order('alice', 'YES', 'BUY', 0.35, 10), { held: true, warnings: ['allowance'] });
  t.like(ok.reply, { status: 'live', warnings: ['allowance'] });
  t.deepEqual(types(ok.events), ['OrderPlaced']);
  t.true((ok.events[0] as Extract<BookEvent, { type: 'OrderPlaced' }>).held, 'the ledger sends no Confirm for it');
  t.falsy((place(b, order('alice', 'YES', 'BUY', 0.3, 1)).events[0] as any).held, 'an order of the two-step path is not marked');
  // Refused by the book: the hold goes back with the refusal, as an event the ledger turns into a Release.
  const bad = order('bob', 'YES', 'BUY', 0.355, 10);
  const refused = place(b, bad, { held: true });
  t.is(refused.reply.error, 'INVALID_TICK_SIZE');
  t.deepEqual(refused.events, [{ type: 'HoldReturned', at: 1000, orderId: bad.hash, owner: 'bob', reason: 'INVALID_TICK_SIZE' }]);
  const fok = place(b, order('bob', 'YES', 'SELL', 0.9, 1, { orderType: 'FOK' }), { held: true });
  t.is(fok.reply.error, 'FOK_NOT_FILLED');
  t.deepEqual(types(fok.events), ['HoldReturned']);
  // A duplicate's hold is the first order's: nothing goes back.
  const dup = place(b, { ...order('carol', 'NO', 'BUY', 0.2, 1), hash: ok.reply.orderID }, { held: true });
  t.is(dup.reply.error, 'DUPLICATE_ORDER');
  t.deepEqual(dup.events, []);
  t.deepEqual(checkBook(b.s), []);
});

test("a SELL's tokens held by its book: against the balance on record less its other SELLs, freed by cancel and fill, newest read wins", (t) => {
  const b = book();
  const hold = (balance?: { amount: bigint; slot: number; delegate?: string; delegatedAmount?: bigint }) => ({
    holdTokens: { ...(balance ? { balance } : {}), delegate: 'D' },
  });
  // No balance on record and none brought: the sender is told to read the chain.
  const unknown = place(b, order('alice', 'YES', 'SELL', 0.6, 5), hold());
  t.is(unknown.reply.error, 'BALANCE_UNKNOWN');
  t.deepEqual(unknown.events, []);
  // 10 tokens at slot 5 (allowance to D for 100): a SELL of 6 rests, marked as the book's own hold.
  const first = place(
    b,
    order('alice', 'YES', 'SELL', 0.6, 6),
    hold({ amount: 10n * U, slot: 5, delegate: 'D', delegatedAmount: 100n * U }),
  );
  t.like(first.reply, { status: 'live', warnings: [] });
  t.deepEqual(types(first.events), ['BalanceSeen', 'OrderPlaced']);
  t.true((first.events[1] as Extract<BookEvent, { type: 'OrderPlaced' }>).order.inBook);
  // 4 left: a SELL of 5 is refused (and changes nothing), one of 4 rests; the other outcome is its own balance.
  const over = place(b, order('alice', 'YES', 'SELL', 0.6, 5), hold());
  t.like(over.reply, { error: 'INSUFFICIENT_BALANCE', message: `maker amount ${5n * U} exceeds the unreserved balance ${4n * U}` });
  t.deepEqual(over.events, []);
  t.like(place(b, order('alice', 'YES', 'SELL', 0.65, 4), hold()).reply, { status: 'live' });
  t.is(place(b, order('alice', 'NO', 'SELL', 0.6, 1), hold()).reply.error, 'BALANCE_UNKNOWN');
  // A cancel frees what the order held at once, with no hand-on to the wallet (read your writes).
  const cancel = b.send({ type: 'CancelOrders', owner: 'alice', orderIds: [first.reply.orderID], now: 1000, releaseTo: 'wallets' });
  t.deepEqual(cancel.reply.canceled, [first.reply.orderID]);
  t.true(cancel.reply.released, 'answered by the book itself: nothing held by the wallet');
  t.is(cancel.forward, undefined);
  t.true((cancel.events[0] as Extract<BookEvent, { type: 'OrderCancelled' }>).release.inBook, 'the ledger sends no Release');
  t.like(place(b, order('alice', 'YES', 'SELL', 0.6, 6), hold()).reply, { status: 'live', warnings: [] });
  // Filled in part by a BUY: what was sold is no longer held by the order (the chain's change will follow).
  const buy = place(b, order('bob', 'YES', 'BUY', 0.6, 2));
  t.is(buy.reply.status, 'matched');
  t.true((buy.events.find((e) => e.type === 'OrderUpdated') as Extract<BookEvent, { type: 'OrderUpdated' }>).release.inBook);
  // 8 held of 10: an older read changes nothing; a newer one (the settled sale, and 1 more sent in: 9) is what holds count against.
  b.send({ type: 'SeeBalance', owner: 'alice', asset: YES, balance: { amount: 50n * U, slot: 4 }, now: 1000 });
  t.like(place(b, order('alice', 'YES', 'SELL', 0.7, 3), hold()).reply, { error: 'INSUFFICIENT_BALANCE' });
  b.send({ type: 'SeeBalance', owner: 'alice', asset: YES, balance: { amount: 9n * U, slot: 9 }, now: 1000 });
  t.like(
    place(b, order('alice', 'YES', 'SELL', 0.7, 1), hold()).reply,
    { status: 'live', warnings: ['allowance'] },
    'the newer read carries no allowance',
  );
  // A BUY cannot ask the book to hold for it.
  t.is(place(b, order('alice', 'YES', 'BUY', 0.3, 1), hold()).reply.error, 'INVALID_COMMAND');
  // Snapshots keep the balances and the marks.
  const again = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(b.s))));
  t.deepEqual(toSnapshot(again), toSnapshot(b.s));
  const more = D.decide(again, {
    type: 'PlaceOrder',
    order: order('alice', 'YES', 'SELL', 0.7, 1),
    now: 1000,
    mintMerge: true,
    distortionBound: 1_000_000,
    ...hold(),
  });
  t.is((more.reply as any).error, 'INSUFFICIENT_BALANCE', 'restored: 9 on record, all held');
  t.deepEqual(checkBook(b.s), []);
});

test('a conversion reserves tokens on the book against its SELLs, all or nothing, until released or lapsed', (t) => {
  const b = book();
  b.send({ type: 'SeeBalance', owner: 'alice', asset: YES, balance: { amount: 10n * U, slot: 1 }, now: 1000 });
  b.send({ type: 'SeeBalance', owner: 'alice', asset: NO, balance: { amount: 3n * U, slot: 1 }, now: 1000 });
  t.like(place(b, order('alice', 'YES', 'SELL', 0.6, 8), { holdTokens: { delegate: null } }).reply, { status: 'live' });
  const reserve = (id: string, amount: bigint, now = 1000) =>
    b.send({
      type: 'ReserveTokens',
      id,
      owner: 'alice',
      holds: [
        { asset: YES, amount },
        { asset: NO, amount },
      ],
      holdMs: 5000,
      now,
    }).reply;
  t.like(reserve('m1', 3n * U), { ok: false, code: 'INSUFFICIENT_BALANCE', asset: YES, available: String(2n * U) }, 'the SELL keeps its 8');
  t.like(reserve('m1', 2n * U), { ok: true });
  t.like(reserve('m1', 2n * U), { ok: true }, 'the same id answers as before');
  t.is(place(b, order('alice', 'YES', 'SELL', 0.6, 1), { holdTokens: { delegate: null } }).reply.error, 'INSUFFICIENT_BALANCE');
  t.like(b.send({ type: 'ReleaseTokens', id: 'm1', now: 1000 }).reply, { ok: true, released: true });
  t.like(b.send({ type: 'ReleaseTokens', id: 'm1', now: 1000 }).reply, { ok: true, released: false });
  t.like(reserve('m2', 2n * U), { ok: true });
  // A node that died mid-conversion leaks nothing: past holdMs the tokens are free again.
  t.like(place(b, order('alice', 'YES', 'SELL', 0.6, 2), { holdTokens: { delegate: null }, now: 7000 }).reply, { status: 'live' });
});

test('a book keeps the token balances of at most BALANCES_MAX owners: the idle one seen longest ago goes first', (t) => {
  const b = book();
  const see = (owner: string, slot = 1) => b.send({ type: 'SeeBalance', owner, asset: YES, balance: { amount: 5n * U, slot }, now: 1000 });
  see('seller');
  t.like(place(b, order('seller', 'YES', 'SELL', 0.6, 1), { holdTokens: { delegate: null } }).reply, { status: 'live' });
  see('idle');
  for (let i = 0; i < BALANCES_MAX - 2; i++) see(`w${i}`);
  t.is(b.s.balances.size, BALANCES_MAX);
  see('idle', 2); // seen again: the most recent now
  see('one-more');
  t.is(b.s.balances.size, BALANCES_MAX);
  t.true(b.s.balances.has('seller'), 'an owner with an order here is kept');
  t.true(b.s.balances.has('idle'));
  t.false(b.s.balances.has('w0'), 'the idle owner seen longest ago is forgotten');
  t.is(place(b, order('w0', 'YES', 'SELL', 0.6, 1), { holdTokens: { delegate: null } }).reply.error, 'BALANCE_UNKNOWN');
});

test("a BUY's collateral out of its wallet's credit on the book: short, it goes to the wallet with the credit left; granted, placed; a fill spends, a cancel frees", (t) => {
  const b = book();
  const credit = (attempt = 'first') => ({
    holdCredit: { walletTopic: 'wallets', bookTopic: 'books', delegate: 'D', attempt },
  });
  // No credit yet: the order goes on to the wallet (Grant), asking for its 3.5 of collateral.
  const o1 = order('alice', 'YES', 'BUY', 0.35, 10);
  const ask = place(b, o1, credit());
  t.deepEqual(ask.events, []);
  t.like(ask.forward, { topic: 'wallets', key: 'alice', id: `grant:${o1.hash}:first` });
  t.like(ask.forward!.cmd, { type: 'Grant', market: MKT, need: String(3_500_000n), returned: '0' });
  const back = (ask.forward!.cmd as any).book;
  t.like(back, { topic: 'books', key: MKT, id: `granted:${o1.hash}:first` });
  // The wallet granted 14 (and its allowance to D of 100): placed, on credit.
  const granted = place(b, o1, { ...credit(), granted: { amount: 14n * U, allowance: { delegate: 'D', amount: 100n * U } } });
  t.like(granted.reply, { status: 'live', warnings: [] });
  t.deepEqual(types(granted.events), ['CreditGranted', 'OrderPlaced']);
  t.true((granted.events[1] as Extract<BookEvent, { type: 'OrderPlaced' }>).order.inBook);
  // 10.5 left: the next BUYs need no wallet, until the credit runs short.
  t.like(place(b, order('alice', 'YES', 'BUY', 0.3, 20), credit()).reply, { status: 'live' }); // 6
  const o3 = order('alice', 'NO', 'BUY', 0.3, 20); // 6 > 4.5 left
  const short = place(b, o3, credit());
  t.like(short.forward!.cmd, { type: 'Grant', need: String(6n * U), returned: String(4_500_000n) });
  t.deepEqual(short.events, [{ type: 'CreditReturned', at: 1000, owner: 'alice', amount: 4_500_000n }]);
  t.is(b.s.credit.get('alice')!.amount, 9_500_000n, 'what its orders hold stays');
  // A fill spends its part of the credit: it goes down with the order's hold.
  const sell = place(b, order('bob', 'YES', 'SELL', 0.35, 4), { holdTokens: { balance: { amount: 100n * U, slot: 1 }, delegate: null } });
  t.is(sell.reply.status, 'matched');
  const fill = sell.events.find((e) => e.type === 'OrderUpdated') as Extract<BookEvent, { type: 'OrderUpdated' }>;
  t.like(fill.release, { asset: 'collateral', amount: 1_400_000n, inBook: true });
  t.is(b.s.credit.get('alice')!.amount, 8_100_000n);
  // A cancel leaves its hold as credit here, for the next BUY: no hand-on to the wallet.
  const cancel = b.send({ type: 'CancelOrders', owner: 'alice', orderIds: [o1.hash], now: 1000, releaseTo: 'wallets' });
  t.is(cancel.forward, undefined);
  t.true(cancel.reply.released);
  t.like(place(b, order('alice', 'YES', 'BUY', 0.3, 7), credit()).reply, { status: 'live' }, '2.1 of the 2.1 freed');
  // Recalled: what no order holds goes back to the wallet, which answers.
  const recall = b.send({ type: 'ReturnCredit', owner: 'alice', walletTopic: 'wallets', now: 2000 });
  t.is(recall.forward, undefined, 'nothing free: answered here');
  t.like(recall.reply, { ok: true, returned: '0' });
  b.send({ type: 'CancelOrders', owner: 'alice', all: true, now: 2000 });
  const recall2 = b.send({ type: 'ReturnCredit', owner: 'alice', walletTopic: 'wallets', now: 2001 });
  t.like(recall2.forward, { topic: 'wallets', key: 'alice' });
  t.like(recall2.forward!.cmd, { type: 'CreditBack', market: MKT, amount: String(8_100_000n) });
  t.is(b.s.credit.get('alice')!.amount, 0n);
  // Snapshots keep the credit; the book stays sound throughout.
  t.deepEqual(toSnapshot(fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(b.s))))), toSnapshot(b.s));
  t.deepEqual(checkBook(b.s), []);
  // Credit granted with an order the book then refuses stays the book's.
  const dup = place(b, o1, { ...credit('again'), granted: { amount: 2n * U } });
  t.is(dup.reply.error, 'DUPLICATE_ORDER');
  t.deepEqual(types(dup.events), ['CreditGranted']);
});

test('an order the sender did not look up: new while the book remembers every order, else CHECK_LEDGER', (t) => {
  const b = book();
  const unchecked = { ledgerChecked: false } as const;
  t.true(b.s.complete, 'a new book remembers every order it was given');
  const o = order('a', 'YES', 'BUY', 0.5, 10);
  t.is(place(b, o, unchecked).reply.status, 'live');
  // A duplicate it knows: refused, and not remembered as answered (the first order's answer keeps its key).
  const dup = place(b, o, unchecked);
  t.is(dup.reply.error, 'DUPLICATE_ORDER');
  t.is((dup as { final?: boolean }).final, false);
  b.send({ type: 'CancelOrders', owner: 'a', orderIds: [o.hash], now: 1001 });
  t.is(place(b, o, unchecked).reply.error, 'DUPLICATE_ORDER', 'a finished order is remembered');
  // Its memory of finished orders lets the first one go, into its let-go filter: the book stays
  // complete; an order the filter may hold is looked up in the ledger (nothing decided), alone.
  const first = order('a', 'YES', 'BUY', 0.1, 1);
  place(b, first);
  b.send({ type: 'CancelOrders', owner: 'a', orderIds: [first.hash], now: 2000 });
  t.is(b.s.letGo, null, 'no filter before the first eviction');
  for (let i = 0; i < FINISHED_CAP; i++) {
    const x = order('a', 'YES', 'BUY', 0.1, 1);
    place(b, x);
    b.send({ type: 'CancelOrders', owner: 'a', orderIds: [x.hash], now: 2000 });
  }
  t.true(b.s.complete, 'what it let go is in its filter');
  t.is(b.s.letGo?.count, 2, 'the two oldest finished orders let go');
  const before = JSON.stringify(toSnapshot(b.s));
  const again = place(b, first, unchecked);
  t.deepEqual(
    [again.reply.error, again.reply.scope, again.events, (again as { final?: boolean }).final],
    ['CHECK_LEDGER', 'order', [], false],
  );
  t.is(JSON.stringify(toSnapshot(b.s)), before, 'nothing changed');
  const fresh = order('a', 'YES', 'BUY', 0.5, 10);
  t.is(place(b, fresh, unchecked).reply.status, 'live', 'a new order, not in the filter: placed without the ledger');
  t.is(place(b, fresh, unchecked).reply.error, 'DUPLICATE_ORDER', 'one it knows is still refused by itself');
  // Asked again without the flag (the sender read the ledger): decided as before, and since the
  // book does not know it, taken: the ledger is what refuses this one.
  t.is(place(b, first).reply.status, 'live');
  // Handed back by its wallet with credit (`granted`) or held by it (`held`): looked up on the way in.
  t.not(place(b, order('a', 'YES', 'BUY', 0.5, 10), { ...unchecked, held: true }).reply.error, 'CHECK_LEDGER');
});

test("past its let-go filter's cap a book no longer remembers every order: every unknown order is looked up", (t) => {
  const b = book({ min_size: '0' });
  const unchecked = { ledgerChecked: false } as const;
  // The ring's evictions, as a long life of the book would make them (remember is what evolve calls).
  let i = 0;
  const hashOf = (k: number) => `0x${k.toString(16).padStart(8, '0')}${'e'.repeat(56)}`;
  for (; i < FINISHED_CAP + LET_GO_CAP - 1; i++) remember(b.s, hashOf(i), 'a', 'cancelled');
  t.true(b.s.complete);
  t.is(b.s.letGo?.count, LET_GO_CAP - 1);
  const snap = JSON.parse(JSON.stringify(toSnapshot(b.s)));
  t.is(typeof snap.letGo.bits, 'string');
  t.false('complete' in snap, 'said by the filter: a node that knows no filter takes the book as not complete');
  t.false(fromSnapshot({ ...snap, letGo: undefined }).complete, 'as such a node reads it');
  const back = fromSnapshot(snap);
  t.deepEqual([back.complete, back.letGo?.count], [true, LET_GO_CAP - 1]);
  t.deepEqual(back.letGo?.bits, b.s.letGo?.bits, 'the same bits, from the snapshot');
  t.like(
    D.decide(back, {
      type: 'PlaceOrder',
      order: order('a', 'YES', 'BUY', 0.5, 1, { hash: hashOf(7) }),
      now: 1000,
      mintMerge: true,
      distortionBound: 1_000_000,
      ...unchecked,
    }).reply,
    { error: 'CHECK_LEDGER', scope: 'order' },
  );
  // A scratch copy (a release's decision) has the same bits, its own.
  const scratch = cloneBook(b.s);
  t.deepEqual(scratch.letGo, b.s.letGo);
  remember(scratch, hashOf(i + 1_000_000), 'a', 'cancelled');
  t.is(scratch.letGo?.count, LET_GO_CAP);
  t.is(b.s.letGo?.count, LET_GO_CAP - 1, 'the book itself unchanged');
  scratch.letGo!.bits[0] ^= 0xff;
  t.not(scratch.letGo!.bits[0], b.s.letGo!.bits[0], 'its own bits');
  // Full: the next order let go cannot be kept, and the book stops being complete.
  remember(b.s, hashOf(i++), 'a', 'cancelled');
  t.true(b.s.complete);
  remember(b.s, hashOf(i++), 'a', 'cancelled');
  t.deepEqual([b.s.complete, b.s.letGo], [false, null]);
  const snap2 = toSnapshot(b.s);
  t.false('complete' in snap2 || 'letGo' in snap2);
  const fresh = place(b, order('a', 'YES', 'BUY', 0.5, 10), unchecked);
  t.deepEqual([fresh.reply.error, fresh.reply.scope], ['CHECK_LEDGER', 'book'], 'a new order too: the book cannot tell');
});

test("a book's complete memory survives its snapshot; one from before says nothing and is not complete", (t) => {
  const b = book();
  place(b, order('a', 'YES', 'BUY', 0.5, 10));
  const snap = JSON.parse(JSON.stringify(toSnapshot(b.s)));
  t.true(snap.complete);
  t.true(fromSnapshot(snap).complete);
  delete snap.complete;
  const old = fromSnapshot(snap);
  t.false(old.complete);
  const r = D.decide(old, {
    type: 'PlaceOrder',
    order: order('a', 'YES', 'BUY', 0.5, 10),
    now: 1000,
    mintMerge: true,
    distortionBound: 1_000_000,
    ledgerChecked: false,
  });
  t.is((r.reply as { error?: string }).error, 'CHECK_LEDGER');
  t.false('complete' in toSnapshot(old), 'written only when true');
});

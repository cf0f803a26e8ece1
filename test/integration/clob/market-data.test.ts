// Public market data (issue 18, item 1) through the real front door, Kafka, PostgreSQL and the local
// chain: the book route equals the book actor's state (asked for every wallet's live orders) after
// mixed places, cancels and fills on both tokens, with mint/merge matching on and off; the YES and
// NO views mirror each other with it on; seq and hash move with the book and only with it; price,
// midpoint, spread and tick size agree with the book; price history buckets real trades; bad
// input is a 400, an unknown token a 404.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import fc from 'fast-check';
import { call } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';
import { TOPICS } from '../../../topics/names.ts';
import { openapi } from '../../../src/http/openapi.ts';
import { ClobClient } from '../../../src/client/index.ts';

type Level = { price: string; size: string };
type View = { bids: Level[]; asks: Level[] };

let w: ClobWorld;
test.before(async () => {
  w = await clobWorld();
});
test.after.always(async () => {
  await w?.close();
});

const ONE = 1_000_000n;
const micro = (s: string) => {
  const neg = s.startsWith('-');
  const [i, f = ''] = s.replace('-', '').split('.');
  const n = BigInt(i) * ONE + BigInt(f.padEnd(6, '0'));
  return neg ? -n : n;
};
const text = (v: bigint) => {
  const neg = v < 0n;
  const a = neg ? -v : v;
  const f = (a % ONE).toString().padStart(6, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${a / ONE}${f ? `.${f}` : ''}`;
};

// Every answer of these routes is checked against its documented schema (/openapi.json).
const problems: string[] = [];
const documented = async (method: 'get' | 'post', path: string, r: Awaited<ReturnType<typeof call>>) => {
  problems.push(...openapi.checkResponse(method, path.split('?')[0], r.status, r.body));
  return r;
};
const get = async (x: ClobWorld, path: string) => documented('get', path, await call(x.node.url, 'GET', path));
const post = async (x: ClobWorld, path: string, body: unknown) => documented('post', path, await call(x.node.url, 'POST', path, { body }));
const place = async (x: ClobWorld, who: 'alice' | 'bob', tok: string, side: 'BUY' | 'SELL', price: string, size: string, type = 'GTC') => {
  const r = await call(x.node.url, 'POST', '/v1/order', {
    token: who === 'alice' ? x.A : x.B,
    body: { order: order(x[who], tok, side, price, size, { feeRateBps: 100 }), orderType: type },
  });
  return r;
};
const book = async (x: ClobWorld, tok: string) => {
  const r = await get(x, `/v1/book?token_id=${tok}`);
  if (r.status !== 200) throw new Error(`book: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

/** What the book actor holds: every wallet's resting (LIVE) orders, asked of the actor itself, aggregated per token view. */
async function actorViews(x: ClobWorld, mintMerge: boolean): Promise<{ yes: View; no: View }> {
  const topic = x.node.config.topicPrefix + TOPICS.clobCommands;
  const orders: any[] = [];
  for (const kp of [x.alice, x.bob]) {
    const r = await x.node.asker.ask<any>({
      topic,
      key: x.market.condition_id,
      cmd: { type: 'ReadOrders', owner: kp.publicKey.toBase58() },
    });
    orders.push(...r.orders.filter((o: any) => o.status === 'LIVE'));
  }
  const view = (tok: string): View => {
    const bids = new Map<bigint, bigint>();
    const asks = new Map<bigint, bigint>();
    const add = (m: Map<bigint, bigint>, p: bigint, n: bigint) => m.set(p, (m.get(p) ?? 0n) + n);
    for (const o of orders) {
      const p = BigInt(o.price);
      const n = BigInt(o.remainingSize);
      if (o.assetId === tok) add(o.side === 'BUY' ? bids : asks, p, n);
      else if (mintMerge) add(o.side === 'BUY' ? asks : bids, ONE - p, n);
    }
    const out = (m: Map<bigint, bigint>, desc: boolean) =>
      [...m].sort((a, b) => (desc ? Number(b[0] - a[0]) : Number(a[0] - b[0]))).map(([p, n]) => ({ price: text(p), size: text(n) }));
    return { bids: out(bids, true), asks: out(asks, false) };
  };
  return { yes: view(x.market.yes_token_id), no: view(x.market.no_token_id) };
}

/** The book route of both tokens equals the actor's state; returns the two answers. */
async function sameAsActor(t: any, x: ClobWorld, mintMerge: boolean, step: string) {
  const [yes, no] = [await book(x, x.market.yes_token_id), await book(x, x.market.no_token_id)];
  const want = await actorViews(x, mintMerge);
  t.deepEqual({ bids: yes.bids, asks: yes.asks }, want.yes, `YES view after ${step}`);
  t.deepEqual({ bids: no.bids, asks: no.asks }, want.no, `NO view after ${step}`);
  t.is(yes.seq, no.seq, 'one book, one seq');
  if (mintMerge) {
    // Mirror images: a YES bid at p is a NO ask at 1 − p, same size, same order.
    const flip = (l: Level[]) => l.map((v) => ({ price: text(ONE - micro(v.price)), size: v.size }));
    t.deepEqual(flip(yes.bids), no.asks, `mirror after ${step}`);
    t.deepEqual(flip(yes.asks), no.bids, `mirror after ${step}`);
  }
  return { yes, no };
}

/** price / midpoint / spread / tick-size of a token agree with its book, single and batch. */
async function quotesAgree(t: any, x: ClobWorld, b: any) {
  const tok = b.asset_id;
  const bid = b.bids[0]?.price ?? null;
  const ask = b.asks[0]?.price ?? null;
  t.deepEqual((await get(x, `/v1/price?token_id=${tok}&side=BUY`)).body, { price: bid });
  t.deepEqual((await get(x, `/v1/price?token_id=${tok}&side=SELL`)).body, { price: ask });
  // (bid + ask) / 2 in units of 1e-7, written out exactly.
  const tenths = bid && ask ? (micro(bid) + micro(ask)) * 5n : null;
  const midText =
    tenths === null ? null : `${tenths / 10_000_000n}.${(tenths % 10_000_000n).toString().padStart(7, '0')}`.replace(/\.?0+$/, '');
  t.deepEqual((await get(x, `/v1/midpoint?token_id=${tok}`)).body, { mid: midText });
  const spread = bid && ask ? text(micro(ask) - micro(bid)) : null;
  t.deepEqual((await get(x, `/v1/spread?token_id=${tok}`)).body, { spread });
  t.deepEqual((await get(x, `/v1/tick-size?token_id=${tok}`)).body, { minimum_tick_size: '0.01' });
  t.deepEqual(
    (
      await post(x, '/v1/prices', [
        { token_id: tok, side: 'BUY' },
        { token_id: tok, side: 'SELL' },
      ])
    ).body,
    { [tok]: { BUY: bid, SELL: ask } },
  );
  t.deepEqual((await post(x, '/v1/midpoints', [{ token_id: tok }])).body, { [tok]: midText });
  t.deepEqual((await post(x, '/v1/spreads', [{ token_id: tok }])).body, { [tok]: spread });
}

test.serial(
  'mint/merge on: the book equals the actor after places, fills and cancels; views mirror; seq and hash move with the book only',
  async (t) => {
    const Y = w.market.yes_token_id;
    const N = w.market.no_token_id;
    const empty = await book(w, Y);
    t.like(empty, {
      market: w.market.condition_id,
      asset_id: Y,
      bids: [],
      asks: [],
      tick_size: '0.01',
      min_order_size: '1',
      neg_risk: false,
      last_trade_price: null,
    });
    t.regex(empty.hash, /^[0-9a-f]{64}$/);
    t.regex(empty.timestamp, /^\d{13}$/);

    // Alice rests bids and asks on both tokens (two orders at 0.41: one level).
    for (const [tok, side, p, n] of [
      [Y, 'BUY', '0.40', '5'],
      [Y, 'BUY', '0.41', '5'],
      [Y, 'BUY', '0.41', '3'],
      [Y, 'SELL', '0.60', '4'],
      [N, 'BUY', '0.30', '6'],
      [N, 'SELL', '0.70', '2'],
    ] as const) {
      t.is((await place(w, 'alice', tok, side, p, n)).body.status, 'live');
    }
    const s1 = await sameAsActor(t, w, true, 'alice rests');
    t.deepEqual(
      s1.yes.bids,
      [
        { price: '0.41', size: '8' },
        { price: '0.4', size: '5' },
        { price: '0.3', size: '2' },
      ],
      'a NO ask at 0.70 is a YES bid at 0.30',
    );
    t.deepEqual(
      s1.yes.asks,
      [
        { price: '0.6', size: '4' },
        { price: '0.7', size: '6' },
      ],
      'a NO bid at 0.30 is a YES ask at 0.70',
    );
    await quotesAgree(t, w, s1.yes);
    await quotesAgree(t, w, s1.no);

    // Nothing changes the book: reads, a cancel of an unknown order, an unfillable FOK. Same seq, same hash.
    t.is((await call(w.node.url, 'POST', '/v1/orders/cancel', { token: w.B, body: { orderID: `0x${'12'.repeat(32)}` } })).status, 200);
    t.is((await place(w, 'bob', Y, 'BUY', '0.65', '50', 'FOK')).body.code, 'FOK_NOT_FILLED');
    const again = await book(w, Y);
    t.is(again.seq, s1.yes.seq);
    t.is(again.hash, s1.yes.hash);

    // Bob sells 6 YES into the 0.41 level (a fill), then buys NO at 0.65 (MINT against YES bids).
    t.is((await place(w, 'bob', Y, 'SELL', '0.41', '6')).body.status, 'matched');
    const s2 = await sameAsActor(t, w, true, 'a YES fill');
    t.true(s2.yes.seq > s1.yes.seq, 'a fill moves seq');
    t.not(s2.yes.hash, s1.yes.hash);
    t.is(s2.yes.last_trade_price, '0.41');
    t.is(s2.no.last_trade_price, '0.59', 'the last trade in NO terms');
    const mint = await place(w, 'bob', N, 'BUY', '0.65', '3');
    t.is(mint.body.status, 'matched', JSON.stringify(mint.body));
    const s3 = await sameAsActor(t, w, true, 'a MINT');
    t.true(s3.yes.seq > s2.yes.seq);
    await quotesAgree(t, w, s3.yes);
    await quotesAgree(t, w, s3.no);

    // Alice cancels her YES ask; Bob rests a NO ask (a YES bid at 0.25).
    const open = (await call(w.node.url, 'GET', '/v1/orders', { token: w.A })).body as any[];
    const ask = open.find((o) => o.assetId === Y && o.side === 'SELL');
    t.deepEqual((await call(w.node.url, 'POST', '/v1/orders/cancel', { token: w.A, body: { orderID: ask.orderHash } })).body.canceled, [
      ask.orderHash,
    ]);
    const s4 = await sameAsActor(t, w, true, 'a cancel');
    t.true(s4.yes.seq > s3.yes.seq);
    t.is((await place(w, 'bob', N, 'SELL', '0.75', '2')).body.status, 'live');
    const s5 = await sameAsActor(t, w, true, 'a NO ask');
    t.is(s5.yes.seq, s4.yes.seq + 1, 'one resting order, one step');
    await quotesAgree(t, w, s5.yes);
    await quotesAgree(t, w, s5.no);

    // Many books at once, in the order asked, each equal to its single read (but the timestamp).
    const many = await post(w, '/v1/books', [{ token_id: N }, { token_id: Y }, { token_id: N }]);
    t.is(many.status, 200);
    t.deepEqual(
      many.body.map((b: any) => b.asset_id),
      [N, Y],
    );
    const strip = ({ timestamp: _t, ...b }: any) => b;
    t.deepEqual(many.body.map(strip), [strip(await book(w, N)), strip(await book(w, Y))]);
  },
);

test.serial("prices-history: the last trade of each bucket, in each token's terms", async (t) => {
  const Y = w.market.yes_token_id;
  const N = w.market.no_token_id;
  // A third trade (YES at 0.55) through real matching, then every trade of the market moved to a
  // known instant so that the buckets are known: T0 + 10 s, T0 + 20 s, T0 + 130 s.
  t.is((await place(w, 'alice', Y, 'SELL', '0.55', '1')).body.status, 'live');
  t.is((await place(w, 'bob', Y, 'BUY', '0.55', '1')).body.status, 'matched');
  const db = w.node.orm.em.getDriver() as unknown as { execute(sql: string, p?: unknown[]): Promise<any[]> };
  const trades = await db.execute('select id, asset_id, price from trades where market = ? order by match_time, id', [
    w.market.condition_id,
  ]);
  t.is(trades.length, 3, JSON.stringify(trades));
  const T0 = 1_700_000_000 - (1_700_000_000 % 3_600);
  const at = [T0 + 10, T0 + 20, T0 + 130];
  for (const [i, tr] of trades.entries()) await db.execute('update trades set match_time = to_timestamp(?) where id = ?', [at[i], tr.id]);
  const yes = (tr: any) => text(tr.asset_id === Y ? BigInt(tr.price) : ONE - BigInt(tr.price));
  const no = (tr: any) => text(ONE - micro(yes(tr)));
  t.is(trades[0].asset_id, Y);
  t.is(trades[1].asset_id, N, 'the MINT was taken in NO');

  const hist = async (qs: string) => {
    const r = await get(w, `/v1/prices-history?${qs}`);
    t.is(r.status, 200, JSON.stringify(r.body));
    return r.body.history;
  };
  t.deepEqual(await hist(`market=${Y}&startTs=${T0}&endTs=${T0 + 299}&fidelity=1`), [
    { t: T0, p: yes(trades[1]) },
    { t: T0 + 120, p: yes(trades[2]) },
  ]);
  t.deepEqual(await hist(`market=${N}&startTs=${T0}&endTs=${T0 + 299}&fidelity=1`), [
    { t: T0, p: no(trades[1]) },
    { t: T0 + 120, p: no(trades[2]) },
  ]);
  t.deepEqual(await hist(`market=${Y}&startTs=${T0}&endTs=${T0 + 299}&fidelity=5`), [{ t: T0, p: '0.55' }]);
  t.deepEqual(
    await hist(`market=${Y}&startTs=${T0 + 15}&endTs=${T0 + 20}&fidelity=1`),
    [{ t: T0, p: yes(trades[1]) }],
    'the window bounds the trades, endTs included',
  );
  t.deepEqual(await hist(`market=${Y}&startTs=${T0 + 21}&endTs=${T0 + 129}&fidelity=1`), []);
  t.deepEqual(await hist(`market=${Y}&interval=1h&endTs=${T0 + 600}&fidelity=1`), [
    { t: T0, p: yes(trades[1]) },
    { t: T0 + 120, p: yes(trades[2]) },
  ]);
  const week = 10_080 * 60;
  t.deepEqual(
    await hist(`market=${Y}&interval=max&fidelity=10080`),
    [{ t: T0 - (T0 % week), p: '0.55' }],
    'max: from the first trade to now',
  );
  t.is((await get(w, `/v1/prices-history?market=${Y}&interval=max&fidelity=60`)).status, 400, 'years of hours are too many points');
  t.deepEqual(await hist(`market=${Y}&interval=1d`), [], 'no trade in the last day (they were moved to the past)');
  // Without fidelity the finest bucket that fits 1,000 points; with one that does not fit, a 400.
  t.true((await hist(`market=${Y}&startTs=${T0}&endTs=${T0 + 30 * 86_400}`)).length >= 1);
  const tooMany = await get(w, `/v1/prices-history?market=${Y}&startTs=${T0}&endTs=${T0 + 2 * 86_400}&fidelity=1`);
  t.is(tooMany.status, 400);
  t.is(tooMany.body.error, 'invalid_request');
  t.regex(tooMany.body.message, /at most 1000 points/);
});

test.serial('bad input is a 400 with { error, message }; an unknown token a 404', async (t) => {
  const Y = w.market.yes_token_id;
  const unknown = Keypair.generate().publicKey.toBase58();
  for (const path of [
    `/v1/book?token_id=${unknown}`,
    `/v1/price?token_id=${unknown}&side=BUY`,
    `/v1/midpoint?token_id=${unknown}`,
    `/v1/spread?token_id=${unknown}`,
    `/v1/tick-size?token_id=${unknown}`,
    `/v1/prices-history?market=${unknown}&interval=1d`,
  ]) {
    const r = await get(w, path);
    t.is(r.status, 404, path);
    t.is(r.body.error, 'not_found', path);
    t.is(typeof r.body.message, 'string');
  }
  for (const [path, body] of [
    ['/v1/books', [{ token_id: Y }, { token_id: unknown }]],
    ['/v1/prices', [{ token_id: unknown, side: 'SELL' }]],
    ['/v1/midpoints', [{ token_id: unknown }]],
    ['/v1/spreads', [{ token_id: unknown }]],
  ] as const) {
    const r = await post(w, path, body);
    t.is(r.status, 404, path);
    t.regex(r.body.message, new RegExp(unknown));
  }
  const bad = [
    '/v1/book',
    '/v1/book?token_id=short',
    `/v1/book?token_id=${'0'.repeat(40)}`,
    `/v1/book?token_id=${'a'.repeat(45)}`,
    `/v1/book?token_id=${Y}&token_id=${Y}`,
    `/v1/price?token_id=${Y}`,
    `/v1/price?token_id=${Y}&side=HOLD`,
    `/v1/midpoint?token_id=${Y}%00`,
    `/v1/prices-history?market=${Y}`,
    `/v1/prices-history?market=${Y}&interval=2d`,
    `/v1/prices-history?market=${Y}&interval=1d&startTs=1`,
    `/v1/prices-history?market=${Y}&interval=1d&fidelity=0`,
    `/v1/prices-history?market=${Y}&startTs=abc`,
    `/v1/prices-history?market=${Y}&startTs=100&endTs=50`,
  ];
  for (const path of bad) {
    const r = await get(w, path);
    t.is(r.status, 400, `${path}: ${JSON.stringify(r.body)}`);
    t.is(typeof r.body.error, 'string');
    t.is(typeof r.body.message, 'string');
  }
  const tooMany = Array.from({ length: 101 }, () => ({ token_id: Y }));
  for (const [path, body] of [
    ['/v1/books', tooMany],
    ['/v1/books', []],
    ['/v1/books', { token_id: Y }],
    ['/v1/prices', [{ token_id: Y }]],
    ['/v1/midpoints', tooMany],
    ['/v1/spreads', [{ token_id: 5 }]],
  ] as const) {
    const r = await post(w, path, body);
    t.is(r.status, 400, `${path} ${JSON.stringify(body).slice(0, 60)}: ${JSON.stringify(r.body)}`);
    t.is(r.body.error, 'invalid_request');
  }
  t.is((await call(w.node.url, 'POST', '/v1/books', { raw: '[{"token_id":"\\u0000"}]' })).body.error, 'malformed_body');
  t.is((await call(w.node.url, 'POST', '/v1/books', { raw: '[' })).status, 400);
});

test.serial('hostile parameters and bodies (fast-check): always a 200, 400 or 404 in its shape, never a 5xx', async (t) => {
  const Y = w.market.yes_token_id;
  const word = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.constantFrom(
      Y,
      w.market.no_token_id,
      'BUY',
      'SELL',
      '1d',
      'max',
      '-1',
      '1e9',
      '99999999999999',
      'NaN',
      '__proto__',
      Y.toLowerCase(),
      `${Y}x`,
    ),
  );
  const gets = fc.record({
    route: fc.constantFrom('book', 'price', 'midpoint', 'spread', 'tick-size', 'prices-history'),
    params: fc.dictionary(fc.constantFrom('token_id', 'side', 'market', 'interval', 'fidelity', 'startTs', 'endTs', 'x'), word, {
      maxKeys: 5,
    }),
  });
  await fc.assert(
    fc.asyncProperty(gets, async ({ route, params }) => {
      const r = await get(w, `/v1/${route}?${new URLSearchParams(params)}`);
      t.true([200, 400, 404].includes(r.status), `${route} ${JSON.stringify(params)}: ${r.status} ${JSON.stringify(r.body)}`);
      if (r.status !== 200) t.true(typeof r.body.error === 'string' && typeof r.body.message === 'string');
    }),
    { numRuns: 150 },
  );
  const bodies = fc.record({
    route: fc.constantFrom('books', 'prices', 'midpoints', 'spreads'),
    body: fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.array(fc.record({ token_id: word, side: word }, { requiredKeys: [] }), { maxLength: 120 }),
    ),
  });
  await fc.assert(
    fc.asyncProperty(bodies, async ({ route, body }) => {
      const r = await post(w, `/v1/${route}`, body);
      t.true([200, 400, 404].includes(r.status), `${route} ${JSON.stringify(body).slice(0, 200)}: ${r.status} ${JSON.stringify(r.body)}`);
      if (r.status !== 200) t.true(typeof r.body.error === 'string' && typeof r.body.message === 'string');
    }),
    { numRuns: 150 },
  );
});

test.serial('mint/merge off: each token shows its own orders only, equal to the actor', async (t) => {
  const x = await clobWorld({ CLOB_ENABLE_MINT_MERGE_MATCHING: '0' });
  t.teardown(() => x.close());
  const Y = x.market.yes_token_id;
  const N = x.market.no_token_id;
  for (const [tok, side, p, n] of [
    [Y, 'BUY', '0.40', '5'],
    [Y, 'BUY', '0.41', '5'],
    [Y, 'SELL', '0.60', '4'],
    [N, 'BUY', '0.55', '6'],
    [N, 'SELL', '0.70', '2'],
  ] as const) {
    t.is((await place(x, 'alice', tok, side, p, n)).body.status, 'live');
  }
  const s1 = await sameAsActor(t, x, false, 'alice rests');
  t.deepEqual(
    s1.yes.bids,
    [
      { price: '0.41', size: '5' },
      { price: '0.4', size: '5' },
    ],
    'no NO order in the YES view',
  );
  t.deepEqual(s1.no.bids, [{ price: '0.55', size: '6' }]);
  // A YES bid at 0.45 rests beside the NO bid at 0.55 (no MINT with it off); fills on YES and NO, a cancel.
  t.is((await place(x, 'bob', Y, 'BUY', '0.45', '3')).body.status, 'live');
  const s2 = await sameAsActor(t, x, false, 'a YES bid that would MINT with it on');
  t.true(s2.yes.seq > s1.yes.seq);
  t.is((await place(x, 'alice', Y, 'SELL', '0.45', '2')).body.status, 'matched', "fills Bob's YES bid");
  t.is((await place(x, 'bob', N, 'SELL', '0.55', '4')).body.status, 'matched', "fills Alice's NO bid");
  const s3 = await sameAsActor(t, x, false, 'fills on both tokens');
  t.is(s3.no.bids[0].size, '2');
  await quotesAgree(t, x, s3.yes);
  await quotesAgree(t, x, s3.no);
  const ordersA = (await call(x.node.url, 'GET', '/v1/orders', { token: x.A })).body as any[];
  const noAsk = ordersA.find((o) => o.assetId === N && o.side === 'SELL');
  await call(x.node.url, 'POST', '/v1/orders/cancel', { token: x.A, body: { orderID: noAsk.orderHash } });
  const s4 = await sameAsActor(t, x, false, 'a NO cancel');
  t.deepEqual(s4.no.asks, []);
  t.is(s4.yes.hash, s3.yes.hash, 'the YES view did not change');
  t.true(s4.no.seq > s3.no.seq, 'but the market seq did');
});

test.serial('the typed client reads the same market data as the routes', async (t) => {
  const c = new ClobClient({ urls: [w.node.url], wallet: Keypair.generate() });
  const Y = w.market.yes_token_id;
  const N = w.market.no_token_id;
  const raw = (await call(w.node.url, 'GET', `/v1/book?token_id=${Y}`)).body;
  const viaClient = await c.book(Y);
  t.deepEqual({ ...viaClient, timestamp: '' }, { ...raw, timestamp: '' });
  t.is(await c.book(Keypair.generate().publicKey.toBase58()), null, 'an unknown token is null');
  t.deepEqual(
    (await c.books([Y, N])).map((b) => b.asset_id),
    [Y, N],
  );
  t.is(await c.price(Y, 'BUY'), raw.bids[0]?.price ?? null);
  t.is(await c.price(Y, 'SELL'), raw.asks[0]?.price ?? null);
  t.deepEqual(
    await c.prices([{ token_id: Y, side: 'BUY' }]),
    (await call(w.node.url, 'POST', '/v1/prices', { body: [{ token_id: Y, side: 'BUY' }] })).body,
  );
  t.is(await c.midpoint(Y), (await call(w.node.url, 'GET', `/v1/midpoint?token_id=${Y}`)).body.mid);
  t.deepEqual(
    await c.midpoints([Y, N]),
    (await call(w.node.url, 'POST', '/v1/midpoints', { body: [{ token_id: Y }, { token_id: N }] })).body,
  );
  t.is(await c.spread(Y), (await call(w.node.url, 'GET', `/v1/spread?token_id=${Y}`)).body.spread);
  t.deepEqual(await c.spreads([N]), (await call(w.node.url, 'POST', '/v1/spreads', { body: [{ token_id: N }] })).body);
  t.is(await c.tickSize(Y), raw.tick_size);
  t.deepEqual(
    await c.pricesHistory({ market: Y, interval: 'max' }),
    (await call(w.node.url, 'GET', `/v1/prices-history?market=${Y}&interval=max`)).body.history,
  );
  c.close();
});

test.serial('every answer above matched its documented schema (/openapi.json)', (t) => {
  t.deepEqual(problems, [], problems.join('\n'));
});

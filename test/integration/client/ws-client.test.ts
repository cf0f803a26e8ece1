// The typed client's live channels (src/client/subscriptions.ts) against a real node (Kafka,
// PostgreSQL, the local chain): `subscribeMarket` keeps a local book per token equal to GET
// /v1/book after places, fills and cancels on both tokens; a forced disconnect resumes from the
// last seq with nothing lost or repeated (and the node counts an exact resume); a first URL that is
// down is passed over; `subscribeUser` gives each wallet its own orders and trades only; /metrics
// shows the channels' connections, messages, drops by close code and resumes. Against stand-in
// servers: a silent connection is replaced (the client's PING and silence timeout), a fatal close
// code ends the subscription.
import test from 'ava';
import { call } from '../../helpers/node.ts';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';
import { WsClient } from '../../helpers/ws.ts';
import WebSocket from 'ws';
import { ClobClient, type MarketSubscription, type UserOrderMessage, type UserTradeMessage } from '../../../src/client/index.ts';

let w: ClobWorld;
let alice: ClobClient;
let bob: ClobClient;
test.before(async () => {
  w = await clobWorld({ WS_PING_MS: '500', WS_IDLE_TIMEOUT_MS: '5000' });
  alice = new ClobClient({ urls: w.node.url, wallet: { secretKey: w.alice.secretKey } });
  // Bob's first URL is down: REST and the channels move on to the node.
  bob = new ClobClient({ urls: ['http://127.0.0.1:9', w.node.url], wallet: { secretKey: w.bob.secretKey }, retryDelayMs: 20 });
});
test.after.always(async () => {
  alice?.close();
  bob?.close();
  await w?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const book = async (tok: string) => {
  const r = await call(w.node.url, 'GET', `/v1/book?token_id=${tok}`);
  if (r.status !== 200) throw new Error(`book: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

/** Waits until the subscription's local books of both tokens equal the book route. */
async function sameAsRoute(t: any, s: MarketSubscription, step: string, ms = 30_000) {
  const [Y, N] = [w.market.yes_token_id, w.market.no_token_id];
  const deadline = Date.now() + ms;
  for (;;) {
    const [y, n] = [await book(Y), await book(N)];
    const want = { Y: { bids: y.bids, asks: y.asks }, N: { bids: n.bids, asks: n.asks } };
    const got = { Y: { bids: s.book(Y)?.bids, asks: s.book(Y)?.asks }, N: { bids: s.book(N)?.bids, asks: s.book(N)?.asks } };
    if (JSON.stringify(got) === JSON.stringify(want)) {
      t.pass(step);
      return;
    }
    if (Date.now() > deadline) {
      t.fail(`${step}: ${JSON.stringify({ want, got })}`);
      return;
    }
    await sleep(50);
  }
}

/** Every seq handed on by the subscription's handlers. */
function recorder() {
  const seqs: number[] = [];
  const books: number[] = [];
  const errors: string[] = [];
  return {
    seqs,
    books,
    errors,
    h: {
      onBook: (m: { seq: number }) => books.push(m.seq),
      onPriceChange: (m: { seq: number }) => seqs.push(m.seq),
      onLastTrade: (m: { seq: number }) => seqs.push(m.seq),
      onTickSize: (m: { seq: number }) => seqs.push(m.seq),
      onError: (e: Error) => errors.push(e.message),
    },
  };
}
const consecutive = (a: number[]) => a.every((x, i) => i === 0 || x === a[i - 1] + 1);

test.serial(
  'subscribeMarket: the local book equals GET /v1/book after places, fills and cancels; a forced disconnect resumes exactly',
  async (t) => {
    const [Y, N, M] = [w.market.yes_token_id, w.market.no_token_id, w.market.condition_id];
    const r = recorder();
    const sub = alice.subscribeMarket([Y, N], r.h);
    t.teardown(() => sub.close());
    await sub.ready;
    t.deepEqual(sub.book(Y)?.bids, (await book(Y)).bids);

    const ids: string[] = [];
    const steps: [string, () => Promise<unknown>][] = [
      [
        'alice bids YES 0.40',
        async () => ids.push((await alice.postOrder({ tokenId: Y, side: 'BUY', price: '0.40', size: '5', feeRateBps: 100 })).orderID),
      ],
      [
        'alice bids YES 0.41',
        async () => ids.push((await alice.postOrder({ tokenId: Y, side: 'BUY', price: '0.41', size: '5', feeRateBps: 100 })).orderID),
      ],
      [
        'alice asks YES 0.60',
        async () => ids.push((await alice.postOrder({ tokenId: Y, side: 'SELL', price: '0.60', size: '4', feeRateBps: 100 })).orderID),
      ],
      [
        'alice bids NO 0.30 (a YES ask at 0.70)',
        async () => ids.push((await alice.postOrder({ tokenId: N, side: 'BUY', price: '0.30', size: '6', feeRateBps: 100 })).orderID),
      ],
      ['bob sells YES into 0.41 (a fill)', () => bob.postOrder({ tokenId: Y, side: 'SELL', price: '0.41', size: '6', feeRateBps: 100 })],
      ['alice cancels her YES ask', () => alice.cancel(ids[2])],
    ];
    for (const [name, act] of steps) {
      await act();
      await sameAsRoute(t, sub, name);
    }
    t.true(r.seqs.length >= steps.length, `${r.seqs.length} changes`);
    t.true(consecutive(r.seqs), `seqs in order, none lost or repeated: ${r.seqs.join(',')}`);
    t.is(sub.position(M)!.seq, w.node.feed.position(M)!.seq, "the client is at the channel's seq");

    // A forced disconnect: three changes while away, then the reconnect resumes from the last seq.
    const before = r.seqs.length;
    const exact0 = w.node.feed.resumes.exact;
    sub.disconnect(1500);
    await sleep(100);
    await bob.postOrder({ tokenId: N, side: 'SELL', price: '0.75', size: '2', feeRateBps: 100 });
    await alice.postOrder({ tokenId: Y, side: 'BUY', price: '0.20', size: '1', feeRateBps: 100 });
    await bob.postOrder({ tokenId: Y, side: 'SELL', price: '0.90', size: '1', feeRateBps: 100 });
    await sameAsRoute(t, sub, 'resumed after three changes');
    await sleep(300);
    t.is(sub.stats.reconnects, 1);
    t.is(sub.resumes.resumedExact, 1, 'the missed messages, no snapshot');
    t.is(sub.resumes.resyncs, 0);
    t.is(r.books.length, 2, 'no book since the first two snapshots');
    t.true(r.seqs.length - before >= 3);
    t.true(consecutive(r.seqs), 'nothing lost or repeated across the disconnect');
    t.is(sub.resumes.duplicates, 0);
    t.is(w.node.feed.resumes.exact, exact0 + 1, 'the node answered a resume with the missed messages');
    t.deepEqual(r.errors, []);

    // A client whose first URL is down: its channel moves on to the node and gets the same book.
    const r2 = recorder();
    const carol = new ClobClient({ urls: ['http://127.0.0.1:9', w.node.url], wallet: { secretKey: w.bob.secretKey } });
    t.teardown(() => carol.close());
    const sub2 = carol.subscribeMarket([N], { ...r2.h, onReconnect: () => undefined });
    t.teardown(() => sub2.close());
    await sub2.ready;
    t.deepEqual(sub2.book(N), { ...sub.book(N)!, seq: sub2.book(N)!.seq }, 'a client behind a dead first URL gets the same book');
    t.is(sub2.url, w.node.url);
  },
);

test.serial(
  'subscribeMarket: an unknown token is an error, the others subscribed; a snapshot replaces the book when the resume is of another feed',
  async (t) => {
    const [Y, M] = [w.market.yes_token_id, w.market.condition_id];
    const r = recorder();
    const fake = w.delegate.publicKey.toBase58();
    const sub = alice.subscribeMarket([Y, fake], r.h);
    t.teardown(() => sub.close());
    while (!sub.book(Y)) await sleep(20);
    while (!r.errors.length) await sleep(20);
    t.regex(r.errors[0], /unknown token/);
    // Pretend the last position came from another node's feed: the reconnect gets a snapshot.
    (sub.position(M) as { feed: string }).feed = 'another-node.x.1';
    const snap0 = w.node.feed.resumes.snapshot;
    sub.disconnect();
    while (r.books.length < 2) await sleep(20);
    t.is(sub.resumes.resyncs, 1);
    t.is(w.node.feed.resumes.snapshot, snap0 + 1);
    t.deepEqual(sub.book(Y)!.bids, (await book(Y)).bids);
  },
);

test.serial('subscribeUser: each wallet gets its own orders and trades only', async (t) => {
  const [Y, N] = [w.market.yes_token_id, w.market.no_token_id];
  await alice.cancelAll();
  await bob.cancelAll(); // an empty book: nothing of the tests before crosses
  const got = { alice: [] as (UserOrderMessage | UserTradeMessage)[], bob: [] as (UserOrderMessage | UserTradeMessage)[] };
  const authed: string[] = [];
  const subs = (['alice', 'bob'] as const).map((who) =>
    (who === 'alice' ? alice : bob).subscribeUser({
      onOrder: (m) => got[who].push(m),
      onTrade: (m) => got[who].push(m),
      onAuth: (wallet) => authed.push(wallet),
    }),
  );
  t.teardown(() => {
    for (const s of subs) s.close();
  });
  while (authed.length < 2) await sleep(20);
  t.deepEqual(authed.sort(), [alice.address, bob.address].sort());
  const a = await alice.postOrder({ tokenId: Y, side: 'BUY', price: '0.45', size: '3', feeRateBps: 100 });
  const b = await bob.postOrder({ tokenId: Y, side: 'SELL', price: '0.45', size: '2', feeRateBps: 100 });
  const c = await bob.postOrder({ tokenId: N, side: 'BUY', price: '0.10', size: '2', feeRateBps: 100 });
  const deadline = Date.now() + 30_000;
  const has = (who: 'alice' | 'bob', f: (m: any) => boolean) => got[who].some(f);
  while (
    Date.now() < deadline &&
    !(
      has('alice', (m) => m.event_type === 'trade') &&
      has('bob', (m) => m.event_type === 'trade') &&
      has('bob', (m) => m.id === c.orderID) &&
      has('alice', (m) => m.type === 'UPDATE')
    )
  )
    await sleep(50);
  t.true(has('alice', (m) => m.event_type === 'order' && m.id === a.orderID && m.type === 'PLACEMENT'));
  t.true(
    has('alice', (m) => m.event_type === 'order' && m.id === a.orderID && m.type === 'UPDATE' && m.size_matched === '2'),
    JSON.stringify(got.alice),
  );
  t.like(
    got.alice.find((m) => m.event_type === 'trade'),
    { trader_side: 'MAKER', price: '0.45', size: '2' },
  );
  t.like(
    got.bob.find((m) => m.event_type === 'trade'),
    { trader_side: 'TAKER', price: '0.45' },
  );
  t.true(has('bob', (m) => m.event_type === 'order' && m.id === b.orderID));
  await sleep(300);
  t.deepEqual(
    got.alice.filter((m) => m.event_type === 'order' && [b.orderID, c.orderID].includes(m.id)),
    [],
    'alice sees no order of bob',
  );
  t.deepEqual(
    got.bob.filter((m) => m.event_type === 'order' && m.id === a.orderID),
    [],
    'bob sees no order of alice',
  );
  t.true(got.alice.filter((m) => m.event_type === 'order').length >= 2);
  t.is(got.alice.filter((m) => m.event_type === 'trade').length, 1, 'one trade, once');
  t.is(got.bob.filter((m) => m.event_type === 'trade').length, 1);
});

test.serial('/metrics: open connections by channel, messages sent, drops by close code, resumes', async (t) => {
  const raw = await WsClient.open(w.node.url, '/ws/market');
  raw.send('{ not json');
  t.is(await raw.closed(), 4400);
  const sub = alice.subscribeMarket([w.market.yes_token_id]);
  const user = alice.subscribeUser();
  t.teardown(() => {
    sub.close();
    user.close();
  });
  await sub.ready;
  await sleep(200);
  const text = (await call(w.node.url, 'GET', '/metrics')).body as string;
  const value = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
  t.is(value(/^ws_connections\{channel="market"[^}]*\} (\d+)/m), 1, 'one market connection open');
  t.is(value(/^ws_connections\{channel="user"[^}]*\} (\d+)/m), 1, 'one user connection open');
  t.true(value(/^ws_messages_sent_total\{channel="market"[^}]*\} (\d+)/m) >= 10, 'market messages counted');
  t.true(value(/^ws_messages_sent_total\{channel="user"[^}]*\} (\d+)/m) >= 3, 'user messages counted');
  t.true(value(/^ws_dropped_total\{code="4400"[^}]*\} (\d+)/m) >= 1, "the malformed frame's close");
  t.is(value(/^ws_resumes_total\{outcome="exact"[^}]*\} (\d+)/m), w.node.feed.resumes.exact);
  t.true(w.node.feed.resumes.exact >= 1);
  t.is(value(/^ws_resumes_total\{outcome="snapshot"[^}]*\} (\d+)/m), w.node.feed.resumes.snapshot);
});

test.serial('a silent connection is replaced, never left half-open; a fatal close code ends the subscription', async (t) => {
  // A server that accepts and then says nothing (answers no PING): the client's silence timeout.
  const listen = async () => {
    const x = new WebSocket.Server({ port: 0, host: '127.0.0.1' });
    await new Promise((r) => x.once('listening', r));
    return x;
  };
  const silent = await listen();
  t.teardown(() => silent.close());
  let opened = 0;
  const pings: string[] = [];
  silent.on('connection', (ws) => {
    opened++;
    ws.on('message', (d) => pings.push(String(d)));
  });
  const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
  const c = new ClobClient({ urls: url, wallet: { secretKey: w.alice.secretKey } });
  const sub = c.subscribeMarket([w.market.yes_token_id], { pingMs: 100, silenceMs: 400 });
  t.teardown(() => sub.close());
  const deadline = Date.now() + 10_000;
  while (sub.stats.silences < 2 && Date.now() < deadline) await sleep(50);
  t.true(sub.stats.silences >= 2, 'silent connections terminated');
  t.true(opened >= 2, 'and replaced');
  t.true(pings.includes('PING'), 'the client sends its PING heartbeat');
  sub.close();
  await sub.done;

  // 4413 (too many subscriptions) is the request's own fault: no reconnect loop, an error.
  const strict = await listen();
  t.teardown(() => strict.close());
  let tries = 0;
  strict.on('connection', (ws) => {
    tries++;
    ws.close(4413, 'at most 1 subscribed assets per connection');
  });
  const errors: string[] = [];
  const s2 = new ClobClient({
    urls: `http://127.0.0.1:${(strict.address() as { port: number }).port}`,
    wallet: { secretKey: w.alice.secretKey },
  }).subscribeMarket([w.market.yes_token_id], { onError: (e) => errors.push(e.message) });
  await s2.done;
  t.is(tries, 1);
  t.regex(errors.join(), /4413/);
});

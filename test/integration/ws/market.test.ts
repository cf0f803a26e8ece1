// The WebSocket `market` channel (issue 18, item 2; docs/ws.md) through the real front door, Kafka,
// PostgreSQL and the local chain: a snapshot plus the changes that follow, applied in order, equal
// GET /v1/book at every step of places, fills (complementary and MINT) and cancels on both tokens
// (mint/merge on: the views mirror); a forced disconnect resumed from seq loses and repeats
// nothing, a resume older than the ring gets a fresh snapshot; a consumer that stops reading is
// dropped (4008) without the node's memory growing; a silent socket is terminated; bad frames,
// unknown tokens, oversized frames, floods and subscription floods get an error or a clear close code.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { call } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';
import { WsClient, rawSocket } from '../../helpers/ws.ts';

let w: ClobWorld;
test.before(async () => {
  w = await clobWorld({
    WS_RING_MESSAGES: '10',
    WS_MESSAGES_PER_SEC: '2000',
    WS_MAX_BUFFERED_BYTES: String(64 * 1024),
    WS_MAX_ASSETS: '50',
    WS_PING_MS: '500',
    WS_IDLE_TIMEOUT_MS: '5000',
    WS_MAX_CONNECTIONS_PER_IP: '20',
  });
});
test.after.always(async () => {
  await w?.close();
});

const place = async (who: 'alice' | 'bob', tok: string, side: 'BUY' | 'SELL', price: string, size: string, x: ClobWorld = w) => {
  const r = await call(x.node.url, 'POST', '/v1/order', {
    token: who === 'alice' ? x.A : x.B,
    body: { order: order(x[who], tok, side, price, size, { feeRateBps: 100 }), orderType: 'GTC' },
  });
  if (r.status !== 200) throw new Error(`place: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
/** Waits until every connection of earlier tests is gone. */
async function settled() {
  const deadline = Date.now() + 30_000;
  while (w.node.ws.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (w.node.ws.size > 0) throw new Error(`${w.node.ws.size} connections still open`);
}
const book = async (tok: string, x: ClobWorld = w) => {
  const r = await call(x.node.url, 'GET', `/v1/book?token_id=${tok}`);
  if (r.status !== 200) throw new Error(`book: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

/** Waits until the client's books of both tokens equal the book route; fails with both after `ms`. */
async function sameAsRoute(t: any, c: WsClient, step: string, ms = 30_000, x: ClobWorld = w) {
  const Y = x.market.yes_token_id;
  const N = x.market.no_token_id;
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    const [y, n] = [await book(Y, x), await book(N, x)];
    const want = { Y: { bids: y.bids, asks: y.asks }, N: { bids: n.bids, asks: n.asks } };
    const got = { Y: c.view(Y), N: c.view(N) };
    if (JSON.stringify(got) === JSON.stringify(want)) {
      t.pass(step);
      return want;
    }
    last = { want, got };
    if (Date.now() > deadline) {
      t.fail(`${step}: ${JSON.stringify(last)}`);
      return want;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.serial(
  'snapshot + changes applied in order equal GET /v1/book at every step; a resume from seq loses and repeats nothing',
  async (t) => {
    const Y = w.market.yes_token_id;
    const N = w.market.no_token_id;
    const M = w.market.condition_id;
    const c = await WsClient.open(w.node.url, '/ws/market');
    c.send({ type: 'subscribe', assets_ids: [Y, N] });
    const [by, bn] = [
      await c.until((m) => m.event_type === 'book' && m.asset_id === Y),
      await c.until((m) => m.event_type === 'book' && m.asset_id === N),
    ];
    t.is(by.market, M);
    t.is(by.hash, (await book(Y)).hash, 'the snapshot hashes as the route does');
    t.is(bn.hash, (await book(N)).hash);
    t.regex(by.timestamp, /^\d{13}$/);
    c.send('PING');
    await c.until((m) => m.event_type === 'PONG');

    const steps: [string, () => Promise<unknown>][] = [
      ['alice bids YES 0.40', () => place('alice', Y, 'BUY', '0.40', '5')],
      ['alice bids YES 0.41', () => place('alice', Y, 'BUY', '0.41', '5')],
      ['alice bids YES 0.41 again (one level)', () => place('alice', Y, 'BUY', '0.41', '3')],
      ['alice asks YES 0.60', () => place('alice', Y, 'SELL', '0.60', '4')],
      ['alice bids NO 0.30 (a YES ask at 0.70)', () => place('alice', N, 'BUY', '0.30', '6')],
      ['alice asks NO 0.70 (a YES bid at 0.30)', () => place('alice', N, 'SELL', '0.70', '2')],
      ['bob sells YES into 0.41 (a fill)', () => place('bob', Y, 'SELL', '0.41', '6')],
      ['bob buys NO at 0.65 (MINT against YES bids)', () => place('bob', N, 'BUY', '0.65', '3')],
    ];
    for (const [name, act] of steps) {
      await act();
      await sameAsRoute(t, c, name);
    }
    const trade = await c.until((m) => m.event_type === 'last_trade_price' && m.asset_id === Y);
    t.like(trade, { market: M, price: '0.41', side: 'SELL' });
    const open = (await call(w.node.url, 'GET', '/v1/orders', { token: w.A })).body as any[];
    const ask = open.find((o) => o.assetId === Y && o.side === 'SELL');
    t.is((await call(w.node.url, 'POST', '/v1/orders/cancel', { token: w.A, body: { orderID: ask.orderHash } })).status, 200);
    await sameAsRoute(t, c, 'alice cancels her YES ask');
    t.deepEqual(c.problems, [], 'every seq follows the one before by one');
    const pos = w.node.feed.position(M)!;
    t.is(c.seqs.get(M), pos.seq, "the client is at the channel's seq");

    // A forced disconnect (no close handshake), three changes while away, a resume from the last seq.
    const lastSeq = c.seqs.get(M)!;
    c.terminate();
    await place('bob', N, 'SELL', '0.75', '2');
    await place('alice', Y, 'BUY', '0.20', '1');
    await place('bob', Y, 'SELL', '0.90', '1');
    const c2 = await WsClient.open(w.node.url, '/ws/market');
    c2.adopt(c);
    c2.send({ type: 'subscribe', assets_ids: [Y, N], last_seq: { [M]: lastSeq } });
    await sameAsRoute(t, c2, 'resumed after three changes');
    await new Promise((r) => setTimeout(r, 300));
    const seqs = c2.messages.filter((m) => m.seq !== undefined).map((m) => m.seq);
    t.false(
      c2.messages.some((m) => m.event_type === 'book'),
      'a resume within the ring sends no snapshot',
    );
    t.deepEqual(
      seqs,
      Array.from({ length: seqs.length }, (_, i) => lastSeq + 1 + i),
      'exactly the missed messages, in order',
    );
    t.true(seqs.length >= 3);
    t.deepEqual(c2.problems, []);

    // Older than the ring (10 messages): a fresh snapshot instead; so is a seq from the future or another feed.
    for (const [why, sub] of [
      ['too old', { last_seq: { [M]: 1 } }],
      ['from the future', { last_seq: { [M]: pos.seq + 1000 } }],
      ['another feed', { last_seq: { [M]: c2.seqs.get(M)! - 1 }, feed: { [M]: 'elsewhere' } }],
    ] as const) {
      const c3 = await WsClient.open(w.node.url, '/ws/market');
      c3.send({ type: 'subscribe', assets_ids: [Y, N], ...sub });
      const b = await c3.until((m) => m.event_type === 'book' && m.asset_id === N);
      t.is(b.seq, c2.seqs.get(M), `${why}: the snapshot is current at the channel's seq`);
      t.is(c3.messages[0].event_type, 'book', why);
      await sameAsRoute(t, c3, `${why}: snapshot equals the route`);
      c3.close();
    }
    c2.close();
  },
);

test.serial("mint/merge off: each token's view shows its own orders only, equal to the route at every step", async (t) => {
  const x = await clobWorld({ CLOB_ENABLE_MINT_MERGE_MATCHING: '0' });
  try {
    const Y = x.market.yes_token_id;
    const N = x.market.no_token_id;
    const c = await WsClient.open(x.node.url, '/ws/market');
    c.send({ type: 'subscribe', assets_ids: [N] });
    await c.until((m) => m.event_type === 'book' && m.asset_id === N);
    c.send({ type: 'subscribe', assets_ids: [Y] }); // a second asset of the market: its snapshot at the same seq
    t.is((await c.until((m) => m.event_type === 'book' && m.asset_id === Y)).seq, c.messages[0].seq);
    const steps: [string, () => Promise<unknown>][] = [
      ['alice bids YES 0.40', () => place('alice', Y, 'BUY', '0.40', '5', x)],
      ['alice bids NO 0.30 (not a YES ask now)', () => place('alice', N, 'BUY', '0.30', '6', x)],
      ['alice asks NO 0.70', () => place('alice', N, 'SELL', '0.70', '2', x)],
      ['bob sells YES into 0.40', () => place('bob', Y, 'SELL', '0.40', '2', x)],
      ["bob buys NO at 0.70 (takes alice's NO ask)", () => place('bob', N, 'BUY', '0.70', '2', x)],
    ];
    for (const [name, act] of steps) {
      await act();
      await sameAsRoute(t, c, name, 30_000, x);
    }
    t.deepEqual(c.view(Y), { bids: [{ price: '0.4', size: '3' }], asks: [] }, 'no mirrored NO orders in the YES view');
    t.deepEqual(c.view(N), { bids: [{ price: '0.3', size: '6' }], asks: [] });
    t.true(
      c.messages.filter((m) => m.event_type === 'price_change').every((m) => m.price_changes.length === 1),
      'one level per change: nothing mirrored',
    );
    t.deepEqual(c.problems, []);
    c.close();
  } finally {
    await x.close();
  }
});

test.serial("a consumer that stops reading is dropped (4008) without the node's memory growing", async (t) => {
  const Y = w.market.yes_token_id;
  const N = w.market.no_token_id;
  await settled();
  const before = w.node.ws.dropped.get(4008) ?? 0;
  const open0 = w.node.ws.size;
  const rss0 = process.memoryUsage().rss;
  const raw = await rawSocket(w.node.url, '/ws/market');
  t.is(w.node.ws.size, open0 + 1);
  // Each subscribe answers two snapshots; sent within the message rate (2,000/s) until the node
  // drops the connection: megabytes, far more than the socket buffers hold.
  const frame = JSON.stringify({ type: 'subscribe', assets_ids: [Y, N] });
  const deadline = Date.now() + 60_000;
  while ((w.node.ws.dropped.get(4008) ?? 0) === before && Date.now() < deadline) {
    for (let i = 0; i < 100; i++) raw.frame(frame);
    await new Promise((r) => setTimeout(r, 100));
  }
  t.is(w.node.ws.dropped.get(4008), before + 1, 'dropped as a slow consumer');
  while (w.node.ws.size > open0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.is(w.node.ws.size, open0, 'its connection is gone (terminated, not left half-open)');
  const grown = process.memoryUsage().rss - rss0;
  t.true(grown < 64 * 1024 * 1024, `rss grew ${grown} bytes`);
  raw.destroy();
  // The node still serves: a new subscriber gets its snapshot.
  const c = await WsClient.open(w.node.url, '/ws/market');
  c.send({ type: 'subscribe', assets_ids: [Y] });
  await c.until((m) => m.event_type === 'book');
  c.close();
});

test.serial('a silent socket is terminated after the idle timeout; ws clients answering pings stay', async (t) => {
  await settled();
  const open0 = w.node.ws.size;
  const before = w.node.ws.dropped.get(4408) ?? 0;
  const c = await WsClient.open(w.node.url, '/ws/market'); // answers pings (ws does)
  const raw = await rawSocket(w.node.url, '/ws/market'); // never answers
  const deadline = Date.now() + 60_000;
  while ((w.node.ws.dropped.get(4408) ?? 0) === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.is(w.node.ws.dropped.get(4408), before + 1, 'the silent one terminated');
  await new Promise((r) => setTimeout(r, 200));
  t.is(w.node.ws.size, open0 + 1, 'the one answering pings is still open');
  t.is(c.closeCode, null);
  c.send('PING');
  await c.until((m) => m.event_type === 'PONG');
  c.close();
  raw.destroy();
});

test.serial('bad input: an error message or a clear close code, never a crash', async (t) => {
  const Y = w.market.yes_token_id;
  const fake = () => {
    let s = '';
    const a = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
    for (const b of randomBytes(44)) s += a[b % a.length];
    return s;
  };
  const c = await WsClient.open(w.node.url, '/ws/market');
  c.send({ type: 'subscribe', assets_ids: [fake(), 'not a token!', Y] });
  t.regex(
    (await c.until((m) => m.event_type === 'error' && /unknown token/.test(m.message) && /base58/.test(m.message))).message,
    /not a token/,
  );
  t.regex((await c.until((m) => m.event_type === 'error' && /no market trades it/.test(m.message))).message, /unknown token/);
  await c.until((m) => m.event_type === 'book' && m.asset_id === Y);
  c.send({ type: 'hello' });
  t.regex((await c.until((m) => m.event_type === 'error' && /unknown message type/.test(m.message))).message, /hello/);
  c.send('{ not json');
  t.is(await c.closed(), 4400);
  t.regex(c.closeReason, /malformed/);

  const close = async (send: (x: WsClient) => void) => {
    const x = await WsClient.open(w.node.url, '/ws/market');
    send(x);
    const code = await x.closed();
    return { code, reason: x.closeReason };
  };
  t.is((await close((x) => x.ws.send(Buffer.from([1, 2, 3])))).code, 1003, 'binary frame');
  t.is((await close((x) => x.send({ type: 'subscribe', assets_ids: [Y], pad: 'x'.repeat(20_000) }))).code, 1009, 'oversized frame');
  t.is((await close((x) => x.send({ type: 'subscribe', assets_ids: 'all' }))).code, 4400, 'assets_ids not an array');
  const flood = await close((x) => {
    for (let i = 0; i < 25_000; i++) x.send('PING');
  });
  t.is(flood.code, 4029, 'a message flood');
  t.regex(flood.reason, /messages per second/);
  const subs = await close((x) => x.send({ type: 'subscribe', assets_ids: Array.from({ length: 60 }, fake) }));
  t.is(subs.code, 4413, 'a subscription flood');
  t.regex(subs.reason, /at most 50 subscribed assets/);

  // Unknown path: 404 at the upgrade; past the connections of one address: 429.
  await t.throwsAsync(WsClient.open(w.node.url, '/ws/nope'), { message: /404/ });
  const many: WsClient[] = [];
  for (let i = w.node.ws.size; i < 20; i++) many.push(await WsClient.open(w.node.url, '/ws/market'));
  await t.throwsAsync(WsClient.open(w.node.url, '/ws/market'), { message: /429/ });
  for (const x of many) x.close();
  t.is((await call(w.node.url, 'GET', `/v1/book?token_id=${Y}`)).status, 200, 'the node still answers');
});

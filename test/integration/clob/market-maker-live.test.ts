// The reference market maker (examples/market-maker/) quotes from the live book: on a real node
// (Kafka, PostgreSQL, the local chain) with a requote timer far away, another wallet's quotes move
// the book and the maker requotes around their midpoint at once, from the `market` channel's
// price_change alone: it reads no book over REST (its REST calls counted by route).
import test from 'ava';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';
import { until } from '../../helpers/settlement-world.ts';
import { ClobClient } from '../../../src/client/index.ts';
import { MarketMaker } from '../../../examples/market-maker/market-maker.ts';

let w: ClobWorld;
test.before(async () => {
  w = await clobWorld();
});
test.after.always(async () => {
  await w?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("the maker requotes around the others' live midpoint after a price_change, without polling the book", async (t) => {
  const Y = w.market.yes_token_id;
  const lines: string[] = [];
  const mm = new MarketMaker({
    urls: w.node.url,
    wallet: { secretKey: w.bob.secretKey },
    market: w.market.condition_id,
    mid: '0.50',
    halfSpreadTicks: 2,
    levels: 1,
    size: '2',
    refreshMs: 120_000,
    log: (l) => lines.push(l),
  });
  const other = new ClobClient({ urls: w.node.url, wallet: { secretKey: w.alice.secretKey } });
  t.teardown(async () => {
    other.close();
  });
  await mm.start();
  const quotes = async (want: string, ms = 20_000) => {
    const deadline = Date.now() + ms;
    const show = () =>
      mm
        .quoted()
        .map((q) => `${q.side} ${q.price}`)
        .sort()
        .join(', ');
    while (show() !== want && Date.now() < deadline) await sleep(50);
    return show();
  };
  t.is(await quotes('BUY 0.48, SELL 0.52'), 'BUY 0.48, SELL 0.52', 'first quotes around the given mid');
  // The order's answer and the channel's price_change travel apart: wait for the channel too.
  await until(() => mm.live!.book(Y)?.bids.length, 10_000, 'a bid on the live book');
  t.deepEqual(mm.live!.book(Y)!.bids, [{ price: '0.48', size: '2' }], 'its own quote is on the live book');
  const rest0 = { ...mm.stats.rest };

  // Another wallet quotes 0.45 / 0.51: the others' midpoint is 0.48, the maker moves to 0.46 / 0.50.
  await other.postOrder({ tokenId: Y, side: 'BUY', price: '0.45', size: '3', feeRateBps: 100 });
  await other.postOrder({ tokenId: Y, side: 'SELL', price: '0.51', size: '3', feeRateBps: 100 });
  t.is(await quotes('BUY 0.46, SELL 0.5'), 'BUY 0.46, SELL 0.5', "requoted around the others' midpoint");
  // Then they move up to 0.49 / 0.61 (below the maker's ask: nothing crosses): the maker to 0.53 / 0.57.
  const open = await other.orders();
  await other.cancelBatch(open.map((o) => o.orderHash));
  await other.postOrder({ tokenId: Y, side: 'SELL', price: '0.61', size: '3', feeRateBps: 100 });
  await other.postOrder({ tokenId: Y, side: 'BUY', price: '0.49', size: '3', feeRateBps: 100 });
  t.is(await quotes('BUY 0.53, SELL 0.57'), 'BUY 0.53, SELL 0.57', 'and again');
  t.deepEqual(mm.fills.size, 0, 'nothing crossed');
  t.true(mm.stats.liveRequotes >= 2, `${mm.stats.liveRequotes} requotes from the live book`);
  t.is(mm.stats.cycles, 1 + mm.stats.liveRequotes, 'no timer cycle ran: every requote came from a price_change');

  // Its REST calls while the book moved: cancels and orders, never a book or market read.
  const since = Object.fromEntries(
    Object.entries(mm.stats.rest)
      .map(([k, n]) => [k, n - (rest0[k] ?? 0)])
      .filter(([, n]) => n),
  );
  t.deepEqual(
    Object.keys(since).filter((k) => /book|price|midpoint|spread|markets/.test(k)),
    [],
    JSON.stringify(since),
  );
  t.true((since['POST /v1/order'] ?? 0) >= 4, JSON.stringify(since));
  t.is(mm.stats.rest['GET /v1/markets/:conditionId'], 1, 'the market read once, at start');
  const r = await mm.stop(2000);
  t.deepEqual(r.extra, []);
  t.is(mm.live!.closed, true, 'the channel ends with the maker');
  if (!t.passed) t.log(lines.join('\n'));
});

// Benchmark (not a test): the MarketBook decider alone (decide + evolve, as the actor runs it) against
// nodejs-order-book on the same seeded workload of places, cancels and crossing orders over 100
// price levels, in the same process. Owners are unique per order and the distortion bound is off,
// so both engines must produce the same fills; the run checks that they do.
// Usage: npx tsx bench/market-book.ts [ops=200000] [seed=42] [rounds=5]
import { stackedBars } from './plot.ts';
import { OrderBook, Side } from 'nodejs-order-book';
import { bestBidAsk, checkBook, marketBookDecider as D, type BookCommand, type BookState } from '../actors/market-book/index.ts';

const [ops = 200_000, seed = 42, rounds = 5] = process.argv.slice(2).map(Number);
const MKT = '0x' + 'be'.repeat(32);
const YES = 'YesMint';
const NO = 'NoMint';

function mulberry32(a: number) {
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Op = { kind: 'place'; id: string; buy: boolean; tick: number; size: number } | { kind: 'cancel'; id: string };

/** 30% cancels of a random earlier order (possibly already filled), 50% passive orders within 40
 *  ticks of mid 0.50, 20% orders that cross up to 5 ticks through mid. */
function workload(n: number, s: number): Op[] {
  const rnd = mulberry32(s);
  const out: Op[] = [];
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = rnd();
    if (r < 0.3 && ids.length) {
      out.push({ kind: 'cancel', id: ids[Math.floor(rnd() * ids.length)] });
      continue;
    }
    const buy = rnd() < 0.5;
    const off = r < 0.8 ? -1 - Math.floor(rnd() * 40) : Math.floor(rnd() * 6);
    const tick = Math.min(99, Math.max(1, buy ? 50 + off : 50 - off));
    const id = `0x${i.toString(16).padStart(64, '0')}`;
    ids.push(id);
    out.push({ kind: 'place', id, buy, tick, size: 1 + Math.floor(rnd() * 10) });
  }
  return out;
}

function deciderRun(w: Op[], mintMerge: boolean, bothOutcomes: boolean) {
  const cmds: BookCommand[] = w.map((op, i) =>
    op.kind === 'cancel'
      ? { type: 'CancelOrders', owner: `u${op.id}`, orderIds: [op.id], now: 1_000 + i }
      : {
          type: 'PlaceOrder',
          now: 1_000 + i,
          mintMerge,
          distortionBound: 1_000_000,
          tradeId: `t${i}`,
          order: {
            hash: op.id,
            maker: `u${op.id}`,
            tokenId: bothOutcomes && op.size & 1 ? NO : YES,
            side: op.buy ? 'BUY' : 'SELL',
            price: op.tick * 10_000,
            size: BigInt(op.size) * 1_000_000n,
            feeRateBps: 0,
            expiration: 0,
            orderType: 'GTC',
            createdAt: 1_000 + i,
          },
        },
  );
  let s: BookState = D.initial(MKT);
  const cfg = D.decide(s, {
    type: 'ConfigureMarket',
    market: { condition_id: MKT, yes_token_id: YES, no_token_id: NO, tick_size: '0.01', min_size: '0' },
  });
  for (const e of cfg.events) s = D.evolve(s, e);
  let traded = 0n;
  let trades = 0;
  const t0 = performance.now();
  for (let i = 0; i < cmds.length; i++) {
    const d = D.decide(s, cmds[i]);
    const ev = d.events;
    for (let j = 0; j < ev.length; j++) {
      const e = ev[j];
      s = D.evolve(s, e);
      if (e.type === 'TradeMatched') {
        traded += e.trade.size;
        trades++;
      }
    }
  }
  const secs = (performance.now() - t0) / 1000;
  const q = bestBidAsk(s, YES);
  return {
    secs,
    traded: Number(traded / 1_000_000n),
    trades,
    resting: s.orders.size,
    bid: q.bid?.price ?? null,
    ask: q.ask?.price ?? null,
    sound: checkBook(s, { mintMerge }).length === 0,
  };
}

function orderBookRun(w: Op[]) {
  const opts = w.map((op) =>
    op.kind === 'cancel' ? op.id : { id: op.id, side: op.buy ? Side.BUY : Side.SELL, size: op.size, price: op.tick * 10_000 },
  );
  const ob = new OrderBook();
  let traded = 0;
  let trades = 0;
  const t0 = performance.now();
  for (let i = 0; i < opts.length; i++) {
    const o = opts[i];
    if (typeof o === 'string') {
      ob.cancel(o);
      continue;
    }
    const r = ob.limit(o);
    const filled = o.size - r.quantityLeft;
    if (filled > 0) {
      traded += filled;
      trades++;
    }
  }
  const secs = (performance.now() - t0) / 1000;
  const [asks, bids] = ob.depth();
  return { secs, traded, trades, bid: bids.length ? bids[0][0] : null, ask: asks.length ? asks[0][0] : null };
}

const w = workload(ops, seed);
// Warm both up (JIT) on a prefix of the same workload.
deciderRun(w.slice(0, 20_000), false, false);
orderBookRun(w.slice(0, 20_000));

// Rounds interleave the engines so that both see the same machine load; each keeps its best.
const runs = {
  lib: [] as ReturnType<typeof orderBookRun>[],
  mine: [] as ReturnType<typeof deciderRun>[],
  mm: [] as ReturnType<typeof deciderRun>[],
};
for (let i = 0; i < rounds; i++) {
  runs.lib.push(orderBookRun(w));
  runs.mine.push(deciderRun(w, false, false));
  runs.mm.push(deciderRun(w, true, true));
}
const best = <T extends { secs: number }>(rs: T[]): T => rs.reduce((a, b) => (b.secs < a.secs ? b : a));
const lib = best(runs.lib);
const mine = best(runs.mine);
const mm = best(runs.mm);

const places = w.filter((o) => o.kind === 'place').length;
console.log(
  `\n${ops.toLocaleString()} operations (seed ${seed}: ${places.toLocaleString()} places, ${(ops - places).toLocaleString()} cancels), 100 price levels, best of ${rounds}`,
);
const row = (name: string, r: { secs: number; traded: number; trades: number }, ratio: boolean) => ({
  engine: name,
  ops,
  seconds: Number(r.secs.toFixed(3)),
  'ops/s': Math.round(ops / r.secs),
  'vs nodejs-order-book': ratio ? `${(lib.secs / r.secs).toFixed(2)}×` : '1.00×',
  'taker fills': r.trades,
  'traded units': r.traded,
});
console.table([
  row('nodejs-order-book 10.1.1 (limit/cancel)', lib, false),
  row('MarketBook decider (decide+evolve)', mine, true),
  row('MarketBook, mint/merge on, YES+NO (not equivalent)', mm, true),
]);
console.log(
  'plot: %s',
  await stackedBars(
    'market-book',
    `order book engines: operations per second (${ops.toLocaleString()} operations, best of ${rounds})`,
    [
      { bar: 'nodejs-order-book 10.1.1', part: 'ops/s', value: Math.round(ops / lib.secs) },
      { bar: 'MarketBook decider', part: 'ops/s', value: Math.round(ops / mine.secs) },
      { bar: 'MarketBook, mint/merge on', part: 'ops/s', value: Math.round(ops / mm.secs) },
    ],
    { unit: 'operations per second (one core)' },
  ),
);
const same = lib.traded === mine.traded && lib.trades === mine.trades && lib.bid === mine.bid && lib.ask === mine.ask;
console.log(
  `same fills as nodejs-order-book: ${same ? 'yes' : 'NO'} (traded ${mine.traded} vs ${lib.traded}, best bid ${mine.bid} vs ${lib.bid}, best ask ${mine.ask} vs ${lib.ask}); book sound: ${mine.sound && mm.sound}`,
);
if (!same || !mine.sound || !mm.sound) process.exitCode = 1;

// The book kind's `seq` (src/clob/kinds.ts) and depth read (actors/market-book/reads.ts depthOf),
// pure: seq counts the events that change the resting book, not held orders, rejections or reads,
// and survives a snapshot as the runtime saves and restores it; with mint/merge on, the YES and NO
// views of any book are mirror images and their levels sum to the resting orders.
import test from 'ava';
import fc from 'fast-check';
import { clobKinds } from '../../../src/clob/kinds.ts';

const MKT = '0x' + 'cd'.repeat(32);
const YES = 'YesMint1111111111111111111111111111111111111';
const NO = 'NoMint22222222222222222222222222222222222222';
const kind = clobKinds({ bookTopic: 'b', walletTopic: 'w' })[0].kind;
const D = kind.decider as any;

function actor() {
  let s = D.initial(MKT);
  const send = (cmd: any) => {
    const d = D.decide(s, kind.parse(cmd, { at: 0 } as any));
    for (const e of d.events) s = D.evolve(s, e);
    return d.reply;
  };
  send({
    type: 'ConfigureMarket',
    now: 0,
    market: {
      condition_id: MKT,
      yes_token_id: YES,
      no_token_id: NO,
      tick_size: '0.01',
      min_size: '1',
      taker_fee_bps: 0,
      start_time: 10_000,
      delay_ms: 5_000,
    },
  });
  return {
    send,
    get s() {
      return s;
    },
    set s(v) {
      s = v;
    },
  };
}

let n = 0;
const place = (
  a: ReturnType<typeof actor>,
  maker: string,
  token: string,
  side: 'BUY' | 'SELL',
  price: number,
  size: number,
  o: { now?: number; type?: string } = {},
) =>
  a.send({
    type: 'PlaceOrder',
    now: o.now ?? 1_000,
    mintMerge: true,
    distortionBound: 1_000_000,
    order: {
      hash: `0x${(++n).toString(16).padStart(64, '0')}`,
      maker,
      tokenId: token,
      side,
      price,
      size: String(size * 1_000_000),
      feeRateBps: 0,
      expiration: 0,
      orderType: o.type ?? 'GTC',
      createdAt: 1_000,
    },
  });
const read = (a: ReturnType<typeof actor>) => a.send({ type: 'ReadBook', mintMerge: true });

test('seq: one step per change of the resting book, none for reads, rejections or held orders; kept by the snapshot', (t) => {
  const a = actor();
  const s0 = read(a).seq;
  t.is(s0, 1, 'the market configured');
  place(a, 'alice', YES, 'BUY', 400_000, 5);
  t.is(read(a).seq, 2, 'a resting order');
  t.is(read(a).seq, 2, 'reads change nothing');
  t.is(place(a, 'bob', YES, 'SELL', 390_000, 50, { type: 'FOK' }).error, 'FOK_NOT_FILLED');
  t.is(read(a).seq, 2, 'a rejection changes nothing');
  t.is(place(a, 'bob', YES, 'BUY', 300_000, 5, { now: 6_000 }).status, 'delayed', 'inside the start window: held');
  t.is(read(a).seq, 2, 'a held order is not on the book');
  t.deepEqual(read(a).yes.bids, [[400_000, '5000000']]);
  t.is(place(a, 'bob', YES, 'SELL', 400_000, 2).status, 'matched');
  t.is(read(a).seq, 3, 'one maker filled (the taker never rested)');
  t.deepEqual(read(a).yes.bids, [[400_000, '3000000']]);
  // Through a snapshot as the runtime stores it (JSON) and back: the same seq, then on from there.
  const restored = kind.fromSnapshot(JSON.parse(JSON.stringify(kind.toSnapshot(a.s))));
  a.s = restored;
  t.is(read(a).seq, 3);
  t.deepEqual(read(a).yes.bids, [[400_000, '3000000']]);
  t.deepEqual(a.send({ type: 'CancelOrders', owner: 'alice', all: true, now: 2_000 }).canceled.length, 1);
  t.is(read(a).seq, 4);
  // A snapshot from before the seq existed restores at 0.
  const { bookSeq: _drop, ...old } = kind.toSnapshot(a.s) as any;
  a.s = kind.fromSnapshot(old);
  t.is(read(a).seq, 0);
});

test('depth with mint/merge on: the YES and NO views mirror, and hold every resting order once', (t) => {
  const arb = fc.array(
    fc.record({
      maker: fc.constantFrom('a', 'b', 'c'),
      yes: fc.boolean(),
      buy: fc.boolean(),
      tick: fc.integer({ min: 1, max: 99 }),
      size: fc.integer({ min: 1, max: 20 }),
    }),
    { maxLength: 40 },
  );
  fc.assert(
    fc.property(arb, (orders) => {
      const a = actor();
      for (const o of orders) place(a, o.maker, o.yes ? YES : NO, o.buy ? 'BUY' : 'SELL', o.tick * 10_000, o.size);
      const r = read(a);
      const flip = (l: [number, string][]) => l.map(([p, s]) => [1_000_000 - p, s]);
      t.deepEqual(flip(r.yes.bids), r.no.asks);
      t.deepEqual(flip(r.yes.asks), r.no.bids);
      for (const v of [r.yes, r.no]) {
        t.true(
          v.bids.every((x: any, i: number) => i === 0 || v.bids[i - 1][0] > x[0]),
          'bids strictly descending',
        );
        t.true(
          v.asks.every((x: any, i: number) => i === 0 || v.asks[i - 1][0] < x[0]),
          'asks strictly ascending',
        );
      }
      let resting = 0n;
      for (const o of a.s.orders.values()) if (o.booked) resting += o.remaining;
      const total = [...r.yes.bids, ...r.yes.asks].reduce((x: bigint, [, s]: any) => x + BigInt(s), 0n);
      t.is(total, resting);
    }),
    { numRuns: 200 },
  );
});

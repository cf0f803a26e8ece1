// Properties of the MarketBook decider over random command streams (several owners, both outcomes,
// crossing prices, cancels, invalidations, expiries; mint/merge on and off; distortion bounds and
// maker caps): sound books, no negative sizes, conservation of matched size, reservations released
// exactly, no self-trades, no trade above the maker cap, replay and snapshot determinism.
import test from 'ava';
import fc from 'fast-check';
import {
  checkBook, fromSnapshot, marketBookDecider as D, reservationOf, toSnapshot,
  type BookCommand, type BookEvent, type BookState, type OrderData,
} from '../actors/market-book/index.ts';

const MKT = '0x' + '12'.repeat(32);
const YES = 'YesMint';
const NO = 'NoMint';
const OWNERS = ['alice', 'ALICE', 'bob', 'carol', 'dave'];

type Step =
  | { k: 'place'; owner: number; yes: boolean; buy: boolean; tick: number; size: number; type: 'GTC' | 'FOK' | 'GTD'; fee: boolean; ttl: number }
  | { k: 'cancel'; pick: number; owner: number }
  | { k: 'cancelAll'; owner: number; asset: 0 | 1 | 2 }
  | { k: 'invalidate'; pick: number }
  | { k: 'expire' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 10, arbitrary: fc.record({
    k: fc.constant('place' as const), owner: fc.nat(OWNERS.length - 1), yes: fc.boolean(), buy: fc.boolean(),
    tick: fc.integer({ min: 35, max: 65 }), size: fc.integer({ min: 1, max: 40 }),
    type: fc.constantFrom('GTC' as const, 'GTC' as const, 'FOK' as const, 'GTD' as const), fee: fc.boolean(), ttl: fc.integer({ min: 1, max: 30 }),
  }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('cancel' as const), pick: fc.nat(), owner: fc.nat(OWNERS.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('cancelAll' as const), owner: fc.nat(OWNERS.length - 1), asset: fc.constantFrom(0 as const, 1 as const, 2 as const) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('invalidate' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('expire' as const) }) },
);

const scenario = fc.record({
  mintMerge: fc.boolean(),
  bound: fc.constantFrom(10_000, 20_000, 50_000, 1_000_000),
  /** CLOB_MAX_MAKERS_PER_TRADE; null: a command without the field (no cap) */
  cap: fc.constantFrom(null, 1, 2, 3, 100),
  /** CLOB_MAX_MAKERS_PER_MINT_MERGE_TRADE; null: a command without the field (the MINT/MERGE trade has `cap`) */
  capMM: fc.constantFrom(null, 1, 2, 6),
  steps: fc.array(step, { minLength: 1, maxLength: 150, size: 'max' }),
});

/** Turns steps into commands (ids and times deterministic from the step index). */
function commands(sc: { mintMerge: boolean; bound: number; cap: number | null; capMM: number | null; steps: Step[] }): BookCommand[] {
  const out: BookCommand[] = [{ type: 'ConfigureMarket', now: 0, market: { condition_id: MKT, yes_token_id: YES, no_token_id: NO, tick_size: '0.01', min_size: '0', taker_fee_bps: 50 } }];
  const hashes: string[] = [];
  sc.steps.forEach((s, i) => {
    const now = 1_000_000 + i * 1000;
    if (s.k === 'place') {
      const hash = `0x${i.toString(16).padStart(64, '0')}`;
      hashes.push(hash);
      out.push({
        type: 'PlaceOrder', now, mintMerge: sc.mintMerge, distortionBound: sc.bound, ...(sc.cap === null ? {} : { maxMakersPerTrade: sc.cap }),
        ...(sc.capMM === null ? {} : { maxMakersPerMintMergeTrade: sc.capMM }), tradeId: `T${i}`,
        order: {
          hash, maker: OWNERS[s.owner], tokenId: s.yes ? YES : NO, side: s.buy ? 'BUY' : 'SELL', price: s.tick * 10_000, size: BigInt(s.size) * 250_000n,
          feeRateBps: s.fee ? 50 : 0, expiration: s.type === 'GTD' ? Math.floor(now / 1000) + s.ttl : 0, orderType: s.type, createdAt: now,
        },
      });
    } else if (s.k === 'cancel' && hashes.length) {
      out.push({ type: 'CancelOrders', owner: OWNERS[s.owner], orderIds: [hashes[s.pick % hashes.length]], now });
    } else if (s.k === 'cancelAll') {
      out.push({ type: 'CancelOrders', owner: OWNERS[s.owner], all: s.asset === 2, ...(s.asset === 2 ? {} : { assetId: s.asset ? YES : NO }), now });
    } else if (s.k === 'invalidate' && hashes.length) {
      out.push({ type: 'InvalidateOrders', orderIds: [hashes[s.pick % hashes.length]], reason: 'settlement failed', tradeId: `X${i}`, now });
    } else if (s.k === 'expire') {
      out.push({ type: 'Expire', now });
    }
  });
  return out;
}

function run(cmds: BookCommand[], s: BookState = D.initial(MKT)) {
  const perCommand: BookEvent[][] = [];
  for (const c of cmds) {
    const d = D.decide(s, c);
    for (const e of d.events) s = D.evolve(s, e);
    perCommand.push(d.events);
  }
  return { s, perCommand };
}

test('books stay sound: no crossed or negative book, conservation, exact releases, no self-trades', (t) => {
  fc.assert(fc.property(scenario, (sc) => {
    let s = D.initial(MKT);
    const orders = new Map<string, { d: OrderData; matched: bigint; released: bigint; done: boolean }>();
    for (const c of commands(sc)) {
      const d = D.decide(s, c);
      for (const e of d.events) {
        s = D.evolve(s, e);
        switch (e.type) {
          case 'OrderPlaced':
          case 'OrderDelayed': {
            const cur = orders.get(e.order.hash);
            if (e.type === 'OrderPlaced') {
              if (e.order.sizeMatched < 0n || e.order.remaining < 0n || e.order.sizeMatched + e.order.remaining !== e.order.size) throw new Error('placed sizes do not add up');
              if (e.status === 'MATCHED' && e.order.remaining !== 0n) throw new Error('MATCHED with a remainder');
              const rel = (cur?.released ?? 0n) + e.release.amount;
              orders.set(e.order.hash, { d: e.order, matched: e.order.sizeMatched, released: rel, done: e.status === 'MATCHED' });
            } else orders.set(e.order.hash, { d: e.order, matched: 0n, released: 0n, done: false });
            break;
          }
          case 'OrderUpdated': {
            const o = orders.get(e.orderId)!;
            if (e.matched <= 0n || e.remaining < 0n) throw new Error('non-positive fill or negative remainder');
            o.matched += e.matched;
            if (o.matched !== e.sizeMatched || o.matched + e.remaining !== o.d.size) throw new Error('maker sizes do not add up');
            o.released += e.release.amount;
            if (e.remaining === 0n) o.done = true;
            break;
          }
          case 'OrderCancelled':
          case 'OrderEjected':
          case 'OrderInvalidated': {
            const o = orders.get(e.orderId)!;
            if (o.done) throw new Error('an order ended twice');
            o.released += e.release.amount;
            o.done = true;
            break;
          }
          case 'TradeMatched': {
            const tr = e.trade;
            let sum = 0n;
            for (const m of tr.maker_orders) {
              if (m.matched_amount <= 0n) throw new Error('empty maker leg');
              if (m.owner.toLowerCase() === tr.owner.toLowerCase()) throw new Error('self-trade');
              sum += m.matched_amount;
            }
            if (sum !== tr.size) throw new Error('taker size != sum of maker legs');
            const cap = tr.match_type === 'COMPLEMENTARY' ? sc.cap : sc.capMM ?? sc.cap;
            if (cap !== null && tr.maker_orders.length > cap) throw new Error(`${tr.maker_orders.length} ${tr.match_type} maker legs > cap ${cap}`);
            if (tr.fee < 0n) throw new Error('negative fee');
            break;
          }
          default:
            break;
        }
      }
      const bad = checkBook(s, { mintMerge: sc.mintMerge });
      if (bad.length) throw new Error(bad.join('; '));
    }
    for (const [hash, o] of orders) {
      const full = reservationOf(o.d).amount;
      if (o.released > full) throw new Error(`${hash} released ${o.released} > ${full}`);
      if (o.done && o.released !== full) throw new Error(`${hash} finished but released ${o.released} of ${full}`);
      const live = s.orders.get(hash) ?? s.held.get(hash)?.order;
      if (o.done !== !live) throw new Error(`${hash}: done ${o.done} but live ${!!live}`);
      if (live && live.sizeMatched !== o.matched) throw new Error(`${hash}: state matched ${live.sizeMatched} != events ${o.matched}`);
    }
  }), { numRuns: 300 });
  t.pass();
});

test('replaying the events rebuilds the same state; the same commands give the same events', (t) => {
  fc.assert(fc.property(scenario, (sc) => {
    const cmds = commands(sc);
    const a = run(cmds);
    const b = run(cmds);
    t.deepEqual(b.perCommand, a.perCommand);
    let r = D.initial(MKT);
    for (const e of a.perCommand.flat()) r = D.evolve(r, e);
    t.deepEqual(toSnapshot(r), toSnapshot(a.s));
  }), { numRuns: 150 });
});

test('a state restored from a JSON snapshot mid-stream decides exactly like the live one', (t) => {
  fc.assert(fc.property(scenario, fc.nat(), (sc, cutAt) => {
    const cmds = commands(sc);
    const cut = cutAt % cmds.length;
    const head = run(cmds.slice(0, cut));
    const restored = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(head.s))));
    const live = run(cmds.slice(cut), head.s);
    const again = run(cmds.slice(cut), restored);
    t.deepEqual(again.perCommand, live.perCommand);
    t.deepEqual(toSnapshot(again.s), toSnapshot(live.s));
  }), { numRuns: 150 });
});

test('decide never writes the state it is given', (t) => {
  fc.assert(fc.property(scenario, (sc) => {
    let s = D.initial(MKT);
    for (const c of commands(sc)) {
      const before = JSON.stringify(toSnapshot(s));
      const d = D.decide(s, c);
      if (JSON.stringify(toSnapshot(s)) !== before) throw new Error(`decide wrote the state on ${c.type}`);
      for (const e of d.events) s = D.evolve(s, e);
    }
  }), { numRuns: 60 });
  t.pass();
});

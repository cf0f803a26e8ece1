// The taker sweep (read-only: decide calls it on the current state and never writes).
//
// A taker on asset A looks at "effective" levels of A's price. For a BUY the sources at effective
// price k are A's asks at k (COMPLEMENTARY) and, with mint/merge, the other asset's bids at 1 − k
// (MINT: a YES buyer at p and a NO buyer at q ≥ 1 − p fund a fresh YES+NO pair). For a SELL they
// are A's bids at k and the other asset's asks at 1 − k (MERGE). Since both ladders are indexed
// by price / gran, "1 − k" is just index L − k. Levels are walked best effective price first; inside
// one effective level the two FIFO queues are merged by booking sequence (time priority across
// both sources). Each maker is visited at most once per sweep, so no copy of the book is needed.
//
// The maker caps (PlaceOrder.maxMakersPerTrade for the COMPLEMENTARY trade, maxMakersPerMintMergeTrade
// for the MINT or MERGE trade: one trade per match type) bound the legs of each trade the sweep
// yields, so every trade's settlement fits in one transaction. The sweep stops at the first maker whose trade is full: it never skips a maker to
// take a later one, so price-time priority holds; what crossing liquidity is left blocks the rest.
import { BUY, SELL, type BookOrder, type Level, type BookState } from './types.ts';

export interface Fill {
  maker: BookOrder;
  qty: bigint;
  /** true: MINT (taker BUY) or MERGE (taker SELL); false: COMPLEMENTARY */
  crossAsset: boolean;
  /** the taker's effective price of this leg (micro, in the taker's asset) */
  eff: number;
}

export interface Sweep {
  fills: Fill[];
  /** size left unfilled */
  rem: bigint;
  /** crossing liquidity is left that the taker may not take (its own orders, beyond the bound, or
   *  past the maker cap): its remainder would rest on a crossed book */
  blocked: boolean;
  /** the maker cap stopped the sweep (then `blocked` is set too) */
  capped: boolean;
  /** legs so far per trade: [COMPLEMENTARY, MINT or MERGE] */
  makers: [number, number];
}

export interface Taker { asset: number; side: number; price: number; size: bigint; ownerKey: string }

const NONE: BookOrder[] = [];

/**
 * Fills `t` against the book. The reference price of the distortion bound is the first effective
 * level that holds an order the taker may trade with (the best opposite price it meets on arrival);
 * the sweep stops before a level whose price lies more than `bound` micro-units away from it.
 * `maxMakers` (null: none) bounds the legs of the sweep's COMPLEMENTARY trade, `maxMintMerge`
 * (null: none; default `maxMakers`) those of its MINT or MERGE trade.
 */
export function sweep(
  state: BookState, t: Taker, mintMerge: boolean, bound: number | null, maxMakers: number | null = null, maxMintMerge: number | null = maxMakers,
): Sweep {
  const { L, gran, ladders, best } = state;
  const other = 1 - t.asset;
  const K = t.price / gran;
  const maxDrift = bound === null ? Infinity : bound;
  const cap: [number, number] = [maxMakers ?? Infinity, maxMintMerge ?? Infinity];
  const res: Sweep = { fills: [], rem: t.size, blocked: false, capped: false, makers: [0, 0] };
  let ref = -1;
  if (t.side === BUY) {
    const own = ladders[t.asset * 2 + SELL];
    const comp = mintMerge ? ladders[other * 2 + BUY] : null;
    let k = best[t.asset * 2 + SELL];
    if (comp) k = Math.min(k, L - best[other * 2 + BUY]);
    for (; k <= K && res.rem > 0n && !res.capped; k++) {
      const l1 = own[k];
      const l2 = comp ? comp[L - k] : null;
      if (l1.live === 0 && (l2 === null || l2.live === 0)) continue;
      if (ref >= 0 && (k - ref) * gran > maxDrift) { res.blocked = true; break; }
      if (takeLevel(res, l1, l2, t.ownerKey, k * gran, cap) && ref < 0) ref = k;
    }
  } else {
    const own = ladders[t.asset * 2 + BUY];
    const comp = mintMerge ? ladders[other * 2 + SELL] : null;
    let k = best[t.asset * 2 + BUY];
    if (comp) k = Math.max(k, L - best[other * 2 + SELL]);
    for (; k >= K && res.rem > 0n && !res.capped; k--) {
      const l1 = own[k];
      const l2 = comp ? comp[L - k] : null;
      if (l1.live === 0 && (l2 === null || l2.live === 0)) continue;
      if (ref >= 0 && (ref - k) * gran > maxDrift) { res.blocked = true; break; }
      if (takeLevel(res, l1, l2, t.ownerKey, k * gran, cap) && ref < 0) ref = k;
    }
  }
  return res;
}

/** Takes one effective level, both queues merged by sequence; true when something was filled.
 *  Stops (res.capped) at a maker whose trade already has its cap's legs ([COMPLEMENTARY, MINT or MERGE]). */
function takeLevel(res: Sweep, l1: Level, l2: Level | null, ownerKey: string, eff: number, cap: [number, number]): boolean {
  const q1 = l1.q;
  const q2 = l2 ? l2.q : NONE;
  let i1 = l1.head;
  let i2 = l2 ? l2.head : 0;
  let took = false;
  while (res.rem > 0n) {
    while (i1 < q1.length && !q1[i1].booked) i1++;
    while (i2 < q2.length && !q2[i2].booked) i2++;
    let m: BookOrder;
    let crossAsset: boolean;
    if (i1 < q1.length && (i2 >= q2.length || q1[i1].seq < q2[i2].seq)) { m = q1[i1++]; crossAsset = false; }
    else if (i2 < q2.length) { m = q2[i2++]; crossAsset = true; }
    else break;
    if (m.ownerKey === ownerKey) { res.blocked = true; continue; }
    const trade = crossAsset ? 1 : 0;
    if (res.makers[trade] >= cap[trade]) { res.blocked = true; res.capped = true; break; }
    res.makers[trade]++;
    const qty = m.remaining < res.rem ? m.remaining : res.rem;
    res.fills.push({ maker: m, qty, crossAsset, eff });
    res.rem -= qty;
    took = true;
  }
  return took;
}

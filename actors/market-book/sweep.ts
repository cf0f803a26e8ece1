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
// The sweep stops when the taker is filled, when the next level no longer crosses its price, or
// before a level more than the distortion bound away from the reference price (contracts/clob.md,
// Matching rules). The taker's own orders are skipped and the sweep goes on past them.
//
// The maker caps (PlaceOrder.maxMakersPerTrade for COMPLEMENTARY trades, maxMakersPerMintMergeTrade
// for MINT or MERGE trades) bound the legs of every trade so that its settlement fits in one
// transaction; they never stop the sweep: when the open trade of a match type is full, the next
// maker of that type opens a new trade. Trades are numbered in the order they are opened (their
// first leg's fill order), which gives the ids `<tradeId>`, `<tradeId>:1`, `<tradeId>:2`, …
import { BUY, SELL, type BookOrder, type Level, type BookState } from './types.ts';

export interface Fill {
  maker: BookOrder;
  qty: bigint;
  /** true: MINT (taker BUY) or MERGE (taker SELL); false: COMPLEMENTARY */
  crossAsset: boolean;
  /** the taker's effective price of this leg (micro, in the taker's asset) */
  eff: number;
  /** index of the trade this leg belongs to, in the order the trades were opened */
  trade: number;
}

export interface Sweep {
  fills: Fill[];
  /** size left unfilled */
  rem: bigint;
  /** how many trades the fills make */
  trades: number;
  /** the reference price of the distortion bound (price index), -1 when there was no opposite order */
  ref: number;
}

export interface Taker {
  asset: number;
  side: number;
  price: number;
  size: bigint;
  ownerKey: string;
}

const NONE: BookOrder[] = [];

/** Per sweep: the open trade of each match type ([COMPLEMENTARY, MINT or MERGE], -1: none), its legs, the caps. */
interface Trades {
  open: [number, number];
  legs: [number, number];
  cap: [number, number];
  n: number;
}

/** A level holds an order that is still on the book (not among `gone`). */
function hasOrder(l: Level | null, gone: ReadonlySet<BookOrder> | null): boolean {
  if (l === null || l.live === 0) return false;
  if (gone === null) return true;
  for (let i = l.head; i < l.q.length; i++) if (l.q[i].booked && !gone.has(l.q[i])) return true;
  return false;
}

/**
 * Fills `t` against the book. The reference price of the distortion bound is the best opposite
 * effective price when the order arrives (with mint/merge, the best over both sources), the
 * taker's own orders included; the sweep stops before a level whose price lies more than `bound`
 * micro-units away from it. `maxMakers` (null: none) bounds the legs of each COMPLEMENTARY trade,
 * `maxMintMerge` (null: none; default `maxMakers`) those of each MINT or MERGE trade. `gone`: orders
 * that this decision takes off the book before matching (due ejections), skipped as if absent.
 */
export function sweep(
  state: BookState,
  t: Taker,
  mintMerge: boolean,
  bound: number | null,
  maxMakers: number | null = null,
  maxMintMerge: number | null = maxMakers,
  gone: ReadonlySet<BookOrder> | null = null,
): Sweep {
  const { L, gran, ladders, best } = state;
  const other = 1 - t.asset;
  const K = t.price / gran;
  const maxDrift = bound === null ? Infinity : bound;
  const tr: Trades = { open: [-1, -1], legs: [0, 0], cap: [maxMakers ?? Infinity, maxMintMerge ?? Infinity], n: 0 };
  const res: Sweep = { fills: [], rem: t.size, trades: 0, ref: -1 };
  if (t.side === BUY) {
    const own = ladders[t.asset * 2 + SELL];
    const comp = mintMerge ? ladders[other * 2 + BUY] : null;
    let k = best[t.asset * 2 + SELL];
    if (comp) k = Math.min(k, L - best[other * 2 + BUY]);
    // the reference: the best effective level still on the book, whatever its price
    for (; k <= L; k++) if (hasOrder(own[k], gone) || (comp !== null && k >= 0 && hasOrder(comp[L - k], gone))) break;
    if (k <= L) res.ref = k;
    for (; k <= K && res.rem > 0n; k++) {
      if ((k - res.ref) * gran > maxDrift) break;
      const l1 = own[k];
      const l2 = comp ? comp[L - k] : null;
      if (l1.live === 0 && (l2 === null || l2.live === 0)) continue;
      takeLevel(res, tr, l1, l2, t.ownerKey, k * gran, gone);
    }
  } else {
    const own = ladders[t.asset * 2 + BUY];
    const comp = mintMerge ? ladders[other * 2 + SELL] : null;
    let k = best[t.asset * 2 + BUY];
    if (comp) k = Math.max(k, L - best[other * 2 + SELL]);
    for (; k >= 0; k--) if (hasOrder(own[k], gone) || (comp !== null && k <= L && hasOrder(comp[L - k], gone))) break;
    if (k >= 0) res.ref = k;
    for (; k >= K && res.rem > 0n; k--) {
      if ((res.ref - k) * gran > maxDrift) break;
      const l1 = own[k];
      const l2 = comp ? comp[L - k] : null;
      if (l1.live === 0 && (l2 === null || l2.live === 0)) continue;
      takeLevel(res, tr, l1, l2, t.ownerKey, k * gran, gone);
    }
  }
  res.trades = tr.n;
  return res;
}

/** Takes one effective level, both queues merged by sequence, skipping the taker's own orders. */
function takeLevel(
  res: Sweep,
  tr: Trades,
  l1: Level,
  l2: Level | null,
  ownerKey: string,
  eff: number,
  gone: ReadonlySet<BookOrder> | null,
): void {
  const q1 = l1.q;
  const q2 = l2 ? l2.q : NONE;
  let i1 = l1.head;
  let i2 = l2 ? l2.head : 0;
  while (res.rem > 0n) {
    while (i1 < q1.length && (!q1[i1].booked || (gone !== null && gone.has(q1[i1])))) i1++;
    while (i2 < q2.length && (!q2[i2].booked || (gone !== null && gone.has(q2[i2])))) i2++;
    let m: BookOrder;
    let crossAsset: boolean;
    if (i1 < q1.length && (i2 >= q2.length || q1[i1].seq < q2[i2].seq)) {
      m = q1[i1++];
      crossAsset = false;
    } else if (i2 < q2.length) {
      m = q2[i2++];
      crossAsset = true;
    } else break;
    if (m.ownerKey === ownerKey) continue;
    const x = crossAsset ? 1 : 0;
    if (tr.open[x] < 0 || tr.legs[x] >= tr.cap[x]) {
      tr.open[x] = tr.n++;
      tr.legs[x] = 0;
    }
    tr.legs[x]++;
    const qty = m.remaining < res.rem ? m.remaining : res.rem;
    res.fills.push({ maker: m, qty, crossAsset, eff, trade: tr.open[x] });
    res.rem -= qty;
  }
}

// Pure reads the runtime runs on an actor's state (book-only routes, /v1/markets best bid/ask).
// They return fresh objects, never references into the state.
import { dataOf, ownerOrders, type Live } from './removals.ts';
import { BUY, NO, SELL, YES, type BookEvent, type BookState, type LastTrade, type Level } from './types.ts';
import type { OrderView, Quote } from '../../topics/clob-commands.ts';

export type { OrderView, Quote };

function viewOf(s: BookState, l: Live): OrderView {
  const d = dataOf(l);
  return {
    orderHash: d.hash,
    maker: d.owner,
    market: s.key,
    assetId: d.tokenId,
    side: d.side,
    price: d.price,
    originalSize: d.size,
    remainingSize: d.remaining,
    sizeMatched: d.sizeMatched,
    feeRateBps: d.feeRateBps,
    orderType: d.orderType,
    expiration: d.expiration,
    createdAt: d.createdAt,
    status: l.held ? 'DELAYED' : 'LIVE',
  };
}

/** An owner's live orders (resting in booking order, then delayed ones), owner compared case-insensitively. */
export function ordersOf(s: BookState, owner: string, opts: { assetId?: string } = {}): OrderView[] {
  return ownerOrders(s, owner.toLowerCase(), opts.assetId).map((x) => viewOf(s, x));
}

/** A live (resting or delayed) order; null once it is filled, cancelled, ejected or invalidated. */
export function getOrder(s: BookState, hash: string): OrderView | null {
  const o = s.orders.get(hash);
  if (o) return viewOf(s, { held: false, o });
  const h = s.held.get(hash);
  return h ? viewOf(s, { held: true, h }) : null;
}

function levelSize(level: Level | undefined): bigint {
  let n = 0n;
  if (level) for (let i = level.head; i < level.q.length; i++) if (level.q[i].booked) n += level.q[i].remaining;
  return n;
}

/**
 * Best bid and ask of an outcome asset. With `mintMerge` the other asset's book counts too, at
 * 1 − its price (a NO bid at q is a YES ask at 1 − q), as the matching engine sees it.
 */
export function bestBidAsk(s: BookState, assetId: string, opts: { mintMerge?: boolean } = {}): { bid: Quote | null; ask: Quote | null } {
  const m = s.market;
  if (!m || (assetId !== m.yesTokenId && assetId !== m.noTokenId)) return { bid: null, ask: null };
  const a = assetId === m.yesTokenId ? YES : NO;
  const o = 1 - a;
  const { L, gran, ladders, best } = s;
  let bid = best[a * 2 + BUY];
  let ask = best[a * 2 + SELL];
  if (opts.mintMerge) {
    bid = Math.max(bid, L - best[o * 2 + SELL]);
    ask = Math.min(ask, L - best[o * 2 + BUY]);
  }
  const side = (k: number, own: Level[], comp: Level[]): Quote | null => {
    if (k < 1 || k > L - 1) return null;
    const size = levelSize(own[k]) + (opts.mintMerge ? levelSize(comp[L - k]) : 0n);
    return { price: k * gran, size };
  };
  return { bid: side(bid, ladders[a * 2 + BUY], ladders[o * 2 + SELL]), ask: side(ask, ladders[a * 2 + SELL], ladders[o * 2 + BUY]) };
}

export function lastTrade(s: BookState): LastTrade | null {
  return s.lastTrade ? { ...s.lastTrade } : null;
}

/** One aggregated price level: price in micro-units, size the sum of the booked orders' remaining. */
export type DepthLevel = [price: number, size: bigint];

/** An outcome asset's book as a taker of it meets it: bids best (highest) first, asks best (lowest) first. */
export interface Depth {
  bids: DepthLevel[];
  asks: DepthLevel[];
}

/**
 * Aggregated levels of an outcome asset: the sizes of its resting (booked) orders summed per price,
 * held (delayed) orders left out. With `mintMerge` the other asset's orders count too, at 1 − their
 * price, as matching sees them (a NO bid at q is a YES ask at 1 − q, a NO ask a YES bid): the YES
 * and NO views are then mirror images of one book. O(resting orders), whatever the tick. Null when
 * `assetId` is not one of the market's assets (or the book has no market yet).
 */
export function depthOf(s: BookState, assetId: string, opts: { mintMerge?: boolean } = {}): Depth | null {
  const m = s.market;
  if (!m || (assetId !== m.yesTokenId && assetId !== m.noTokenId)) return null;
  const a = assetId === m.yesTokenId ? YES : NO;
  const bids = new Map<number, bigint>();
  const asks = new Map<number, bigint>();
  const add = (side: Map<number, bigint>, price: number, size: bigint) => side.set(price, (side.get(price) ?? 0n) + size);
  for (const o of s.orders.values()) {
    if (!o.booked || o.remaining <= 0n) continue;
    if (o.a === a) add(o.s === BUY ? bids : asks, o.price, o.remaining);
    else if (opts.mintMerge) add(o.s === BUY ? asks : bids, 1_000_000 - o.price, o.remaining);
  }
  return {
    bids: [...bids].sort((x, y) => y[0] - x[0]),
    asks: [...asks].sort((x, y) => x[0] - y[0]),
  };
}

/**
 * Whether an event changes what `depthOf` shows (or the market the book is read with): a resting
 * order placed, a maker filled, a resting order cancelled, ejected or invalidated, the market
 * (re)configured. Held orders, trades and settlement news do not. The book's `seq` counts them.
 */
export function changesBook(e: BookEvent): boolean {
  switch (e.type) {
    case 'OrderPlaced':
      return e.status === 'LIVE';
    case 'OrderUpdated':
      return true;
    case 'OrderCancelled':
    case 'OrderEjected':
    case 'OrderInvalidated':
      return !e.held;
    case 'MarketConfigured':
      return true;
    default:
      return false;
  }
}

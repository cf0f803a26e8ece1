// evolve: applies one event to the state IN PLACE and returns the same object. The runtime owns the
// state and keeps no earlier version; decide never writes it. Replaying a market's events from
// initialBook rebuilds exactly the state that produced them.
import { gcd, ONE } from './amounts.ts';
import { tidyDue, trackResting } from './due.ts';
import { remember } from './finished.ts';
import { evolveTokens } from './tokens.ts';
import { evolveCredit, spendCredit } from './credit.ts';
import { addOwner, dropOwner } from './owners.ts';
import { book, emptyBest, emptyLadders, relayout, unbook } from './ladder.ts';
import { BUY, NO, SELL, YES, type BookEvent, type BookOrder, type BookState, type Finish, type OrderData } from './types.ts';

const DEFAULT_GRAN = 10_000;

export function initialBook(key: string): BookState {
  const L = ONE / DEFAULT_GRAN;
  return {
    key,
    market: null,
    gran: DEFAULT_GRAN,
    L,
    ladders: emptyLadders(L),
    best: emptyBest(L),
    orders: new Map(),
    held: new Map(),
    byOwner: new Map(),
    finished: new Map(),
    finishedRing: [],
    finishedPos: 0,
    complete: true,
    letGo: null,
    nextSeq: 0,
    lastTrade: null,
    balances: new Map(),
    credit: new Map(),
    reserves: new Map(),
    byExpiry: [],
    byBookedAt: [],
  };
}

export function toBookOrder(d: OrderData, bookedAt: number): BookOrder {
  return {
    hash: d.hash,
    owner: d.owner,
    tokenId: d.tokenId,
    outcome: d.outcome,
    side: d.side,
    price: d.price,
    size: d.size,
    sizeMatched: d.sizeMatched,
    remaining: d.remaining,
    feeRateBps: d.feeRateBps,
    expiration: d.expiration,
    orderType: d.orderType,
    createdAt: d.createdAt,
    seq: d.seq,
    delayed: d.delayed,
    ...(d.inBook ? { inBook: true as const } : {}),
    ownerKey: d.owner.toLowerCase(),
    a: d.outcome === 'YES' ? YES : NO,
    s: d.side === 'BUY' ? BUY : SELL,
    bookedAt,
    booked: false,
  };
}

export function evolveBook(s: BookState, e: BookEvent): BookState {
  switch (e.type) {
    case 'OrderUpdated': {
      const o = s.orders.get(e.orderId);
      if (!o) return s;
      if (e.release.inBook && e.release.asset === 'collateral') spendCredit(s, e.owner, e.release.amount);
      o.sizeMatched = e.sizeMatched;
      o.remaining = e.remaining;
      if (e.remaining === 0n) finish(s, e.orderId, 'filled');
      return s;
    }
    case 'TradeMatched': {
      const t = e.trade;
      s.lastTrade = { asset_id: t.asset_id, side: t.side, price: t.price, size: t.size, match_time: t.match_time };
      return s;
    }
    case 'OrderPlaced': {
      const d = e.order;
      s.nextSeq = d.seq + 1;
      if (e.release.inBook && e.release.asset === 'collateral') spendCredit(s, d.owner, e.release.amount);
      const wasHeld = s.held.size > 0 && s.held.has(d.hash);
      if (e.status === 'MATCHED') {
        if (wasHeld) finish(s, d.hash, 'filled');
        else remember(s, d.hash, d.owner, 'filled');
        return s;
      }
      if (wasHeld) s.held.delete(d.hash);
      else addOwner(s, d.owner.toLowerCase(), d.hash);
      const o = toBookOrder(d, e.at);
      s.orders.set(d.hash, o);
      book(s, o);
      trackResting(s, o);
      return s;
    }
    case 'TradeUpdated':
      return s; // settlement news: the ledger's, not the book's
    case 'HoldReturned':
      return s;
    case 'BalanceSeen':
    case 'TokensReserved':
    case 'TokensReleased':
      evolveTokens(s, e);
      return s;
    case 'CreditGranted':
    case 'CreditReturned':
      evolveCredit(s, e);
      return s; // the wallet's business: the order never was on the book
    case 'OrderCancelled':
      finish(s, e.orderId, 'cancelled');
      return s;
    case 'OrderEjected':
      finish(s, e.orderId, 'ejected');
      return s;
    case 'OrderInvalidated':
      finish(s, e.orderId, 'invalidated');
      return s;
    case 'OrderDelayed': {
      const d = e.order;
      s.held.set(d.hash, {
        order: d,
        releaseAt: e.releaseAt,
        mintMerge: e.mintMerge,
        distortionBound: e.distortionBound,
        maxMakersPerTrade: e.maxMakersPerTrade ?? null,
        // events from before the MINT/MERGE cap: the one cap was both trades'
        maxMakersPerMintMergeTrade:
          e.maxMakersPerMintMergeTrade === undefined ? (e.maxMakersPerTrade ?? null) : e.maxMakersPerMintMergeTrade,
        tradeId: e.tradeId,
      });
      addOwner(s, d.owner.toLowerCase(), d.hash);
      return s;
    }
    case 'MarketConfigured': {
      s.market = e.market;
      const gran = s.orders.size === 0 ? e.market.tick : gcd(s.gran, e.market.tick);
      if (gran !== s.gran) relayout(s, gran);
      return s;
    }
  }
}

/** Takes an order off the book (or out of the held queue) and remembers how it finished. */
export function finish(s: BookState, hash: string, how: Finish): void {
  let owner: string;
  const o = s.orders.get(hash);
  if (o) {
    unbook(s, o);
    s.orders.delete(hash);
    tidyDue(s);
    owner = o.owner;
  } else {
    const h = s.held.get(hash);
    if (!h) return;
    s.held.delete(hash);
    owner = h.order.owner;
  }
  const ownerKey = owner.toLowerCase();
  dropOwner(s, ownerKey, hash);
  remember(s, hash, owner, how);
}

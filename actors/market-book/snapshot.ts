// Snapshots: the state as plain JSON (bigint → decimal string) and back. A snapshot holds the logical
// content only (market, resting orders in booking order, held orders in arrival order, the
// finished-order memory, the last trade); ladders, best indexes and the owner index are rebuilt.
import { ONE } from './amounts.ts';
import { book, emptyBest, emptyLadders } from './ladder.ts';
import { initialBook, toBookOrder } from './evolve.ts';
import { trackResting } from './due.ts';
import { finishedList, remember } from './finished.ts';
import { letGoIn, letGoOut, type LetGoJson } from './let-go.ts';
import { addOwner } from './owners.ts';
import type { BookState, Finish, Market, OrderData, TokenBalance } from './types.ts';

/** A TokenBalance as JSON. */
interface BalanceJson {
  amount: string;
  slot: number;
  delegate?: string | null;
  delegatedAmount?: string;
}

type Str<T> = { [K in keyof T]: T[K] extends bigint ? string : T[K] };

export interface BookSnapshot {
  v: 1;
  key: string;
  market: Str<Market> | null;
  gran: number;
  nextSeq: number;
  orders: Array<{ order: Str<OrderData>; bookedAt: number }>;
  held: Array<{
    order: Str<OrderData>;
    releaseAt: number;
    mintMerge: boolean;
    distortionBound: number;
    maxMakersPerTrade?: number | null;
    maxMakersPerMintMergeTrade?: number | null;
    tradeId: string | null;
  }>;
  finished: Array<[hash: string, owner: string, how: Finish]>;
  /**
   * BookState.complete while the book has no let-go filter (absent in snapshots from before: not
   * complete, since nothing said so).
   */
  complete?: boolean;
  /**
   * BookState.letGo (let-go.ts) of a complete book that let orders go; its presence says the book
   * is complete, and `complete` is then left out: a node of an earlier version, which knows no
   * filter, takes such a book as not complete and reads the ledger (safe during a rolling upgrade).
   */
  letGo?: LetGoJson;
  lastTrade: { asset_id: string; side: 'BUY' | 'SELL'; price: number; size: string; match_time: number } | null;
  /** Outcome token balances as last seen, [owner, asset, balance] (absent in snapshots from before). */
  balances?: Array<[owner: string, asset: string, balance: BalanceJson]>;
  /** Collateral credit by owner, [owner, amount, allowance delegate, allowance amount] (absent in snapshots from before). */
  credit?: Array<[owner: string, amount: string, delegate?: string | null, allowance?: string]>;
  /** Conversions' token holds (absent in snapshots from before). */
  reserves?: Array<[id: string, owner: string, holds: Array<{ asset: string; amount: string }>, lapsesAt: number]>;
}

const dataOut = (d: OrderData): Str<OrderData> => ({
  hash: d.hash,
  owner: d.owner,
  tokenId: d.tokenId,
  outcome: d.outcome,
  side: d.side,
  price: d.price,
  size: d.size.toString(),
  sizeMatched: d.sizeMatched.toString(),
  remaining: d.remaining.toString(),
  feeRateBps: d.feeRateBps,
  expiration: d.expiration,
  orderType: d.orderType,
  createdAt: d.createdAt,
  seq: d.seq,
  delayed: d.delayed,
  ...(d.inBook ? { inBook: true as const } : {}),
});

const dataIn = (d: Str<OrderData>): OrderData => ({
  ...d,
  size: BigInt(d.size),
  sizeMatched: BigInt(d.sizeMatched),
  remaining: BigInt(d.remaining),
});

/** `letGo: false` leaves the let-go filter out (cloneBook copies its bits as they are). */
export function toSnapshot(s: BookState, o: { letGo?: boolean } = {}): BookSnapshot {
  const orders: BookSnapshot['orders'] = [];
  for (const o of s.orders.values()) if (o.booked) orders.push({ order: dataOut(o), bookedAt: o.bookedAt });
  return {
    v: 1,
    key: s.key,
    market: s.market ? { ...s.market, minSize: s.market.minSize.toString() } : null,
    gran: s.gran,
    nextSeq: s.nextSeq,
    orders,
    held: [...s.held.values()].map((h) => ({
      order: dataOut(h.order),
      releaseAt: h.releaseAt,
      mintMerge: h.mintMerge,
      distortionBound: h.distortionBound,
      maxMakersPerTrade: h.maxMakersPerTrade,
      maxMakersPerMintMergeTrade: h.maxMakersPerMintMergeTrade,
      tradeId: h.tradeId,
    })),
    finished: finishedList(s),
    ...(s.complete && !s.letGo ? { complete: true } : {}),
    ...(s.complete && s.letGo && o.letGo !== false ? { letGo: letGoOut(s.letGo) } : {}),
    lastTrade: s.lastTrade ? { ...s.lastTrade, size: s.lastTrade.size.toString() } : null,
    ...(s.balances.size ? { balances: balancesOut(s) } : {}),
    ...(s.reserves.size ? { reserves: reservesOut(s) } : {}),
    ...(s.credit.size
      ? {
          credit: [...s.credit].map(([owner, c]) =>
            c.allowance
              ? ([owner, c.amount.toString(), c.allowance.delegate, c.allowance.amount.toString()] as [
                  string,
                  string,
                  string | null,
                  string,
                ])
              : ([owner, c.amount.toString()] as [string, string]),
          ),
        }
      : {}),
  };
}

export function fromSnapshot(json: unknown): BookState {
  const j = json as BookSnapshot;
  if (!j || j.v !== 1) throw new Error('not a MarketBook snapshot (v1)');
  const s = initialBook(j.key);
  s.market = j.market ? { ...j.market, minSize: BigInt(j.market.minSize) } : null;
  s.gran = j.gran;
  s.L = ONE / j.gran;
  s.ladders = emptyLadders(s.L);
  s.best = emptyBest(s.L);
  s.nextSeq = j.nextSeq;
  for (const x of j.orders) {
    const o = toBookOrder(dataIn(x.order), x.bookedAt);
    s.orders.set(o.hash, o);
    addOwner(s, o.ownerKey, o.hash);
    book(s, o);
    trackResting(s, o);
  }
  for (const h of j.held) {
    const order = dataIn(h.order);
    s.held.set(order.hash, {
      order,
      releaseAt: h.releaseAt,
      mintMerge: h.mintMerge,
      distortionBound: h.distortionBound,
      maxMakersPerTrade: h.maxMakersPerTrade ?? null,
      maxMakersPerMintMergeTrade: h.maxMakersPerMintMergeTrade === undefined ? (h.maxMakersPerTrade ?? null) : h.maxMakersPerMintMergeTrade,
      tradeId: h.tradeId,
    });
    addOwner(s, order.owner.toLowerCase(), order.hash);
  }
  for (const [hash, owner, how] of j.finished) remember(s, hash, owner, how);
  s.complete = j.complete === true || j.letGo !== undefined;
  s.letGo = j.letGo ? letGoIn(j.letGo) : null;
  s.lastTrade = j.lastTrade ? { ...j.lastTrade, size: BigInt(j.lastTrade.size) } : null;
  for (const [owner, asset, b] of j.balances ?? []) {
    let m = s.balances.get(owner);
    if (!m) s.balances.set(owner, (m = new Map()));
    const tb: TokenBalance = { amount: BigInt(b.amount), slot: b.slot };
    if (b.delegate !== undefined) tb.delegate = b.delegate;
    if (b.delegatedAmount !== undefined) tb.delegatedAmount = BigInt(b.delegatedAmount);
    m.set(asset, tb);
  }
  for (const [owner, amount, delegate, allowance] of j.credit ?? [])
    s.credit.set(owner, {
      amount: BigInt(amount),
      ...(allowance !== undefined ? { allowance: { delegate: delegate ?? null, amount: BigInt(allowance) } } : {}),
    });
  for (const [id, owner, holds, lapsesAt] of j.reserves ?? [])
    s.reserves.set(id, { owner, holds: holds.map((h) => ({ asset: h.asset, amount: BigInt(h.amount) })), lapsesAt });
  return s;
}

function balancesOut(s: BookState): NonNullable<BookSnapshot['balances']> {
  const out: NonNullable<BookSnapshot['balances']> = [];
  for (const [owner, m] of s.balances)
    for (const [asset, b] of m) {
      const j: BalanceJson = { amount: b.amount.toString(), slot: b.slot };
      if (b.delegate !== undefined) j.delegate = b.delegate;
      if (b.delegatedAmount !== undefined) j.delegatedAmount = b.delegatedAmount.toString();
      out.push([owner, asset, j]);
    }
  return out;
}

function reservesOut(s: BookState): NonNullable<BookSnapshot['reserves']> {
  const out: NonNullable<BookSnapshot['reserves']> = [];
  for (const [id, r] of s.reserves)
    out.push([id, r.owner, r.holds.map((h) => ({ asset: h.asset, amount: h.amount.toString() })), r.lapsesAt]);
  return out;
}

/** A deep, independent copy (for a decision that must try several steps on a scratch state). */
export function cloneBook(s: BookState): BookState {
  const c = fromSnapshot(toSnapshot(s, { letGo: false }));
  // Its own copy of the filter's bits (256 KiB: a copy, not 350,000 characters of base64 each way).
  c.complete = s.complete;
  c.letGo = s.letGo ? { bits: s.letGo.bits.slice(), count: s.letGo.count } : null;
  return c;
}

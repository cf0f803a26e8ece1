// Placing an order: validation, the start-window delay, matching, and the events of the result;
// and the release of delayed orders, placed one after another on a scratch copy of the book.
import type { Decision } from '../../src/runtime/types.ts';
import { feeOf, feeUnits, ONE, ONE_N, releaseOf, reservationOf } from './amounts.ts';
import { dueAt } from './due.ts';
import { ownerCount } from './owners.ts';
import { holdTokens, type TokenHold } from './tokens.ts';
import { holdCredit, type CreditHold } from './credit.ts';
import { evolveBook } from './evolve.ts';
import { cloneBook } from './snapshot.ts';
import { mayHaveLetGo } from './let-go.ts';
import { sweep, type Fill } from './sweep.ts';
import {
  BUY,
  NO,
  SELL,
  YES,
  type BookEvent,
  type Decided,
  type BookOrder,
  type BookState,
  type MakerFill,
  type Market,
  type OrderData,
  type OrderInput,
  type PlaceAccepted,
  type PlaceOrder,
  type PlaceReply,
  type Rejection,
  type ReleaseReply,
  type TradeSummary,
} from './types.ts';

export type { Decided } from './types.ts';

export const reject = (error: Rejection['error'], message: string): Rejection => ({ error, message });

/** Trade ids of one taker execution, by the order the trades were opened: the first as given
 *  (default `t-<order hash>`), then `<first>:1`, `<first>:2`, … */
export function tradeIdOf(given: string | null | undefined, hash: string, k: number): string {
  const first = given ?? `t-${hash}`;
  return k === 0 ? first : `${first}:${k}`;
}

/** The checks that need no book: market open, shape, tick, min size, expiry. */
export function validateOrder(m: Market, o: OrderInput, now: number): Rejection | null {
  if (m.status !== 'open') return reject('MARKET_CLOSED', `market ${m.conditionId} is ${m.status}`);
  if (typeof o.hash !== 'string' || o.hash.length === 0) return reject('INVALID_ORDER', 'order hash missing');
  if (typeof o.maker !== 'string' || o.maker.length === 0) return reject('INVALID_ORDER', 'maker missing');
  if (o.tokenId !== m.yesTokenId && o.tokenId !== m.noTokenId) return reject('INVALID_ORDER', 'tokenId is not an outcome of this market');
  if (o.side !== 'BUY' && o.side !== 'SELL') return reject('INVALID_ORDER', 'side must be BUY or SELL');
  if (o.orderType !== 'GTC' && o.orderType !== 'GTD' && o.orderType !== 'FOK')
    return reject('INVALID_ORDER', 'orderType must be GTC, FOK or GTD');
  if (typeof o.size !== 'bigint' || o.size <= 0n) return reject('INVALID_ORDER', 'size must be a positive integer of micro-units');
  if (!Number.isInteger(o.feeRateBps) || o.feeRateBps < 0 || o.feeRateBps > 10_000)
    return reject('INVALID_ORDER', 'feeRateBps must be an integer in 0..10000');
  if (!Number.isSafeInteger(o.expiration) || o.expiration < 0) return reject('INVALID_ORDER', 'expiration must be unix seconds or 0');
  if (!Number.isInteger(o.price) || o.price % m.tick !== 0 || o.price < m.tick || o.price > ONE - m.tick) {
    return reject('INVALID_TICK_SIZE', `price ${o.price / ONE} must be a multiple of the tick ${m.tick / ONE} within [tick, 1 - tick]`);
  }
  if (o.size < m.minSize) return reject('INVALID_MIN_SIZE', `size ${o.size} is below the market minimum ${m.minSize}`);
  if (o.orderType === 'GTD' && o.expiration === 0) return reject('ORDER_EXPIRED', 'a GTD order needs an expiration in the future');
  if (o.expiration !== 0 && o.expiration * 1000 <= now) return reject('ORDER_EXPIRED', 'the order has expired');
  return null;
}

/** The start window: an order arriving in [startTime − delayMs, startTime) is held until startTime. */
export function inStartWindow(m: Market, now: number): boolean {
  return m.startTime !== null && m.delayMs > 0 && now >= m.startTime - m.delayMs && now < m.startTime;
}

const inputOf = (d: OrderData): OrderInput => ({
  hash: d.hash,
  maker: d.owner,
  tokenId: d.tokenId,
  side: d.side,
  price: d.price,
  size: d.size,
  feeRateBps: d.feeRateBps,
  expiration: d.expiration,
  orderType: d.orderType,
  createdAt: d.createdAt,
});

export function decidePlace(s: BookState, cmd: PlaceOrder): Decided<PlaceReply> {
  const r = place(s, cmd);
  const g = cmd.granted;
  if (!g) return r;
  // Credit handed back with the order (wallet Grant) is the book's whatever the order's fate: first.
  const granted: BookEvent = {
    type: 'CreditGranted',
    at: cmd.now,
    owner: cmd.order.maker,
    amount: g.amount,
    ...(g.allowance ? { allowance: { delegate: g.allowance.delegate, amount: g.allowance.amount } } : {}),
  };
  return { events: [granted, ...r.events], reply: r.reply };
}

/** Whether this book knows the order: live, held, or finished and still remembered. */
const known = (s: BookState, hash: string) => s.orders.has(hash) || s.finished.has(hash) || (s.held.size > 0 && s.held.has(hash));

/**
 * An order its sender did not look up in the ledger (`ledgerChecked: false`) and this book does not
 * know: new while the book remembers every order it was ever given (BookState.complete) and its
 * let-go filter does not say it may have had it; otherwise the sender is to read the ledger and ask
 * again (CHECK_LEDGER: nothing decided, and not remembered as answered, so the same ask may come
 * again), for this order alone after a filter's "maybe" (scope 'order'), for every order of the
 * book while it is not complete (scope 'book'). Before anything else: a BUY short of credit would be
 * handed on to its wallet, and comes back `granted`, past this check.
 */
export function ledgerFirst(s: BookState, cmd: PlaceOrder): Decision<BookEvent, Rejection> | null {
  if (cmd.ledgerChecked !== false || cmd.granted || cmd.held || known(s, cmd.order.hash)) return null;
  if (s.complete && !(s.letGo && mayHaveLetGo(s.letGo, cmd.order.hash))) return null;
  const why = s.complete ? 'may have been given' : 'does not remember every order it was given';
  return {
    events: [],
    reply: { ...reject('CHECK_LEDGER', `this book ${why}: read the ledger for ${cmd.order.hash}`), scope: s.complete ? 'order' : 'book' },
    final: false,
  };
}

function place(s: BookState, cmd: PlaceOrder): Decided<PlaceReply> {
  const m = s.market;
  if (!m) return { events: [], reply: reject('MARKET_NOT_FOUND', `no market ${s.key} on this book`) };
  const o = cmd.order;
  const bad = validateOrder(m, o, cmd.now);
  if (bad) return { events: [], reply: bad };
  if (known(s, o.hash)) return { events: [], reply: reject('DUPLICATE_ORDER', `order ${o.hash} was placed before`) };
  // One wallet cannot flood a book: at its cap only orders that never rest (FOK) are taken.
  const maxOpen = typeof cmd.maxOpenOrders === 'number' ? cmd.maxOpenOrders : null;
  if (maxOpen !== null && o.orderType !== 'FOK' && ownerCount(s, o.maker.toLowerCase()) >= maxOpen) {
    return {
      events: [],
      reply: reject('INVALID_ORDER', `the wallet already has ${maxOpen} open orders in this market, the most allowed: cancel some first`),
    };
  }
  // A SELL straight from the front door: its tokens are held here (tokens.ts), before any matching;
  // a BUY: its collateral out of its wallet's credit here (credit.ts, with what came with it).
  let hold: TokenHold | CreditHold | null = null;
  if (cmd.holdTokens) {
    if (o.side !== 'SELL' || cmd.held)
      return { events: [], reply: reject('INVALID_COMMAND', 'holdTokens is for a SELL its wallet does not hold') };
    hold = holdTokens(s, o.maker, o.tokenId, o.size, cmd.holdTokens, cmd.now);
    if (hold.refused) return { events: hold.events, reply: hold.refused };
  } else if (cmd.holdCredit || cmd.granted) {
    if (o.side !== 'BUY' || cmd.held)
      return { events: [], reply: reject('INVALID_COMMAND', 'holdCredit is for a BUY its wallet does not hold') };
    hold = holdCredit(s, cmd, cmd.holdCredit?.delegate ?? null);
    if (hold.refused) return { events: hold.events, reply: hold.refused };
  }
  const d: OrderData = {
    hash: o.hash,
    owner: o.maker,
    tokenId: o.tokenId,
    outcome: o.tokenId === m.yesTokenId ? 'YES' : 'NO',
    side: o.side,
    price: o.price,
    size: o.size,
    sizeMatched: 0n,
    remaining: o.size,
    feeRateBps: o.feeRateBps,
    expiration: o.expiration,
    orderType: o.orderType,
    createdAt: Number.isSafeInteger(o.createdAt) ? o.createdAt : cmd.now,
    seq: -1,
    delayed: false,
    ...(hold ? { inBook: true as const } : {}),
  };
  const bound = typeof cmd.distortionBound === 'number' ? cmd.distortionBound : null;
  const cap = typeof cmd.maxMakersPerTrade === 'number' ? cmd.maxMakersPerTrade : null;
  if (cap !== null && (!Number.isSafeInteger(cap) || cap < 1))
    return { events: [], reply: reject('INVALID_COMMAND', 'maxMakersPerTrade must be a positive integer') };
  // absent (commands from before it): the MINT/MERGE trade has the COMPLEMENTARY trade's cap
  const capMM = typeof cmd.maxMakersPerMintMergeTrade === 'number' ? cmd.maxMakersPerMintMergeTrade : cap;
  if (capMM !== null && (!Number.isSafeInteger(capMM) || capMM < 1))
    return { events: [], reply: reject('INVALID_COMMAND', 'maxMakersPerMintMergeTrade must be a positive integer') };
  const seen = hold?.events ?? [];
  const warnings = hold?.short ? ['allowance'] : [];
  if (inStartWindow(m, cmd.now)) {
    return {
      events: [
        ...seen,
        {
          type: 'OrderDelayed',
          at: cmd.now,
          order: { ...d, delayed: true },
          releaseAt: m.startTime!,
          mintMerge: cmd.mintMerge,
          distortionBound: bound ?? Number.MAX_SAFE_INTEGER,
          maxMakersPerTrade: cap,
          maxMakersPerMintMergeTrade: capMM,
          tradeId: cmd.tradeId ?? null,
          reservation: reservationOf(d),
          ...(cmd.held ? { held: true } : {}),
        },
      ],
      reply: {
        status: 'delayed',
        orderID: d.hash,
        makingAmount: 0n,
        takingAmount: 0n,
        tradeIDs: [],
        warnings,
        sizeMatched: 0n,
        remaining: d.size,
        fee: 0n,
      },
    };
  }
  // What is due at `now` goes first (as Expire then StartGame would): the sweep skips those orders,
  // and an accepted order's decision starts with their OrderEjected events.
  const due = dueAt(s, cmd.now);
  const r = match(s, m, d, cmd.now, cmd.mintMerge, bound, cmd.tradeId, cap, capMM, due.ejected);
  // Its wallet holds for it for good: the ledger sends no confirmation (see held in types.ts).
  if (cmd.held) for (const e of r.events) if (e.type === 'OrderPlaced') e.held = true;
  if ('error' in r.reply) return seen.length ? { events: seen, reply: r.reply } : r;
  if (warnings.length) r.reply.warnings = warnings;
  if (due.events.length === 0 && seen.length === 0) return r;
  return { events: [...due.events, ...seen, ...r.events], reply: r.reply };
}

/**
 * Matches an accepted order against the book. Events, in order: OrderPlaced (the order after its
 * arrival fills: LIVE when a remainder rests, MATCHED when filled), then per trade, in the order the
 * trades were opened, TradeMatched and one OrderUpdated per maker leg. A GTC/GTD remainder always
 * rests, even where the book then rests crossed (against the taker's own orders, or prices beyond
 * the distortion bound); a FOK one is FOK_NOT_FILLED. `d` must be a fresh object: it becomes the
 * event's order. `maxMakers` (null: none) bounds the maker legs of each COMPLEMENTARY trade,
 * `maxMintMerge` (null: none) those of each MINT or MERGE trade; `gone`: orders this decision ejects
 * first (the sweep skips them).
 */
export function match(
  s: BookState,
  m: Market,
  d: OrderData,
  now: number,
  mintMerge: boolean,
  bound: number | null,
  tradeId: string | null | undefined,
  maxMakers: number | null,
  maxMintMerge: number | null,
  gone: ReadonlySet<BookOrder> | null = null,
): Decided<PlaceReply> {
  const side = d.side === 'BUY' ? BUY : SELL;
  const sw = sweep(
    s,
    { asset: d.outcome === 'YES' ? YES : NO, side, price: d.price, size: d.size, ownerKey: d.owner.toLowerCase() },
    mintMerge,
    bound,
    maxMakers,
    maxMintMerge,
    gone,
  );
  const fills = sw.fills;
  if (fills.length > 0 && d.feeRateBps < m.takerFeeBps) {
    return { events: [], reply: reject('FEE_RATE_TOO_LOW', `an order marketable on arrival must carry feeRateBps >= ${m.takerFeeBps}`) };
  }
  if (d.orderType === 'FOK' && sw.rem > 0n)
    return { events: [], reply: reject('FOK_NOT_FILLED', 'the book cannot fill the whole order now') };
  const rem = sw.rem;
  const matched = d.size - rem;
  const tradeEvents: BookEvent[] = [];
  const tradeIDs: string[] = [];
  let value = 0n;
  let fee = 0n;
  if (fills.length > 0) {
    // One trade per match type, split further where a trade reaches its maker cap: each trade
    // holds the legs of one match type, in fill order; trades go out in the order they were opened.
    const groups: Fill[][] = [];
    for (let k = 0; k < sw.trades; k++) groups.push([]);
    for (const f of fills) groups[f.trade].push(f);
    for (let k = 0; k < groups.length; k++) {
      const g = groups[k];
      const t = tradeOf(tradeIdOf(tradeId, d.hash, k), m, d, g, now);
      tradeIDs.push(t.id);
      value += t.notional;
      fee += t.fee;
      tradeEvents.push({ type: 'TradeMatched', at: now, trade: t });
      for (const f of g) {
        const mk = f.maker;
        const left = mk.remaining - f.qty;
        tradeEvents.push({
          type: 'OrderUpdated',
          at: now,
          orderId: mk.hash,
          owner: mk.owner,
          assetId: mk.tokenId,
          side: mk.side,
          price: mk.price,
          matched: f.qty,
          sizeMatched: mk.sizeMatched + f.qty,
          remaining: left,
          status: left === 0n ? 'MATCHED' : 'LIVE',
          tradeId: t.id,
          release: releaseOf(mk, mk.remaining, left),
        });
      }
    }
  }
  d.sizeMatched = matched;
  d.remaining = rem;
  d.seq = s.nextSeq;
  const events: BookEvent[] = [
    {
      type: 'OrderPlaced',
      at: now,
      order: d,
      status: rem === 0n ? 'MATCHED' : 'LIVE',
      reservation: reservationOf(d),
      release: releaseOf(d, d.size, rem),
      tradeIds: tradeIDs,
    },
  ];
  for (const e of tradeEvents) events.push(e);
  const reply: PlaceAccepted = {
    status: fills.length > 0 ? 'matched' : 'live',
    orderID: d.hash,
    makingAmount: side === BUY ? value : matched,
    takingAmount: side === BUY ? matched : value,
    tradeIDs,
    warnings: [],
    sizeMatched: matched,
    remaining: rem,
    fee,
  };
  return { events, reply };
}

function tradeOf(id: string, m: Market, d: OrderData, g: Fill[], now: number): TradeSummary {
  let size = 0n;
  let value = 0n;
  let units = 0n;
  const legs: MakerFill[] = new Array(g.length);
  for (let i = 0; i < g.length; i++) {
    const f = g[i];
    const mk = f.maker;
    size += f.qty;
    value += f.qty * BigInt(f.eff);
    units += feeUnits(d.feeRateBps, f.eff, f.qty);
    legs[i] = {
      order_id: mk.hash,
      owner: mk.owner,
      maker_address: mk.owner,
      matched_amount: f.qty,
      price: mk.price,
      fee_rate_bps: mk.feeRateBps,
      asset_id: mk.tokenId,
      outcome: mk.outcome,
      side: mk.side,
    };
  }
  return {
    id,
    taker_order_id: d.hash,
    market: m.conditionId,
    asset_id: d.tokenId,
    side: d.side,
    size,
    price: g[g.length - 1].eff,
    notional: value / ONE_N,
    fee_rate_bps: d.feeRateBps,
    fee: feeOf(units),
    status: 'MATCHED',
    match_type: !g[0].crossAsset ? 'COMPLEMENTARY' : d.side === 'BUY' ? 'MINT' : 'MERGE',
    match_time: now,
    last_update: now,
    owner: d.owner,
    maker_address: d.owner,
    trader_side: 'TAKER',
    transaction_hash: '',
    outcome: d.outcome,
    maker_orders: legs,
  };
}

/** Places the held orders due at `now` in arrival order, each seeing the book the previous one left.
 *  One that fails a check now (market closed, expired, FOK not filled, fee too low) is ejected.
 *  Before them, what is due on the book at `now` (expired makers, and those booked before the
 *  start) is ejected, as in decidePlace. */
export function decideRelease(s: BookState, now: number): Decided<ReleaseReply> {
  const due = [];
  for (const h of s.held.values()) if (h.releaseAt <= now) due.push(h);
  if (due.length === 0 || !s.market) return { events: [], reply: { released: [], replies: {} } };
  const scratch = cloneBook(s);
  const events: BookEvent[] = [];
  const reply: ReleaseReply = { released: [], replies: Object.create(null) };
  for (const e of dueAt(scratch, now).events) {
    events.push(e);
    evolveBook(scratch, e);
  }
  for (const h of due) {
    const m = scratch.market!;
    const d: OrderData = { ...h.order };
    const bad = validateOrder(m, inputOf(d), now);
    const r: Decided<PlaceReply> = bad
      ? { events: [], reply: bad }
      : match(scratch, m, d, now, h.mintMerge, h.distortionBound, h.tradeId, h.maxMakersPerTrade, h.maxMakersPerMintMergeTrade);
    const out: BookEvent[] =
      'error' in r.reply
        ? [
            {
              type: 'OrderEjected',
              at: now,
              orderId: d.hash,
              owner: d.owner,
              assetId: d.tokenId,
              side: d.side,
              price: d.price,
              sizeMatched: 0n,
              remaining: d.size,
              held: true,
              release: { owner: d.owner, ...reservationOf(d), ...(d.inBook ? { inBook: true as const } : {}) },
              reason: 'release_rejected',
              code: r.reply.error,
            },
          ]
        : r.events;
    reply.released.push(d.hash);
    reply.replies[d.hash] = r.reply;
    for (const e of out) {
      events.push(e);
      evolveBook(scratch, e);
    }
  }
  return { events, reply };
}

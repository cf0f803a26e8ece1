// Commands that take orders off the book: user cancels, settlement-failure invalidation, expiry and
// the game-start ejection. Every removal event carries the reservation it releases.
import { releaseOf, reservationOf } from './amounts.ts';
import { ownerHashes } from './owners.ts';
import type {
  Decided,
  BookEvent,
  BookOrder,
  BookState,
  CancelOrders,
  CancelReply,
  EjectReply,
  HeldOrder,
  InvalidateOrders,
  InvalidateReply,
  OrderData,
  Release,
} from './types.ts';

/** A live order: resting on the book, or held (delayed). */
export type Live = { held: false; o: BookOrder } | { held: true; h: HeldOrder };

export const dataOf = (l: Live): OrderData => (l.held ? l.h.order : l.o);

function live(s: BookState, hash: string): Live | null {
  const o = s.orders.get(hash);
  if (o) return { held: false, o };
  const h = s.held.get(hash);
  return h ? { held: true, h } : null;
}

function releaseOfLive(l: Live): Release {
  const d = dataOf(l);
  return l.held ? { owner: d.owner, ...reservationOf(d), ...(d.inBook ? { inBook: true as const } : {}) } : releaseOf(d, d.remaining, 0n);
}

/** The fields of an event that takes `l` off the book (or out of the hold) at `at`. */
export function gone(l: Live, at: number) {
  const d = dataOf(l);
  const release = releaseOfLive(l);
  return {
    at,
    orderId: d.hash,
    owner: d.owner,
    assetId: d.tokenId,
    side: d.side,
    price: d.price,
    sizeMatched: d.sizeMatched,
    remaining: d.remaining,
    held: l.held,
    release,
  };
}

/** An owner's live orders: resting ones in booking order, then held ones in arrival order. */
export function ownerOrders(s: BookState, ownerKey: string, assetId?: string): Live[] {
  const booked: BookOrder[] = [];
  let anyHeld = false;
  for (const hash of ownerHashes(s, ownerKey)) {
    const o = s.orders.get(hash);
    if (!o) anyHeld = true;
    else if (assetId === undefined || o.tokenId === assetId) booked.push(o);
  }
  booked.sort((a, b) => a.seq - b.seq);
  const out: Live[] = booked.map((o) => ({ held: false, o }));
  if (anyHeld) {
    for (const h of s.held.values()) {
      if (h.order.owner.toLowerCase() === ownerKey && (assetId === undefined || h.order.tokenId === assetId)) out.push({ held: true, h });
    }
  }
  return out;
}

/** Cancels by id (each answered in canceled or not_canceled) and/or all of the owner's orders
 *  (`all`, or `assetId` for one outcome). Owners are compared case-insensitively. */
export function decideCancel(s: BookState, cmd: CancelOrders): Decided<CancelReply> {
  const ownerKey = String(cmd.owner ?? '').toLowerCase();
  const events: BookEvent[] = [];
  // not_canceled is keyed by order hashes: a null-prototype object, so that a new key never adds
  // a hidden-class transition (every literal {} keyed by unique hashes would).
  const reply: CancelReply = { canceled: [], not_canceled: Object.create(null) };
  const ids = cmd.orderIds ?? [];
  const seen = ids.length > 1 || cmd.all || cmd.assetId !== undefined ? new Set<string>() : null;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (seen) {
      if (seen.has(id)) continue;
      seen.add(id);
    }
    const o = s.orders.get(id);
    const l: Live | null = o ? { held: false, o } : s.held.has(id) ? { held: true, h: s.held.get(id)! } : null;
    if (l) {
      if (dataOf(l).owner.toLowerCase() !== ownerKey) reply.not_canceled[id] = 'not yours';
      else cancelOne(l, cmd.now, events, reply, cmd.reason);
      continue;
    }
    const f = s.finished.get(id);
    if (!f) reply.not_canceled[id] = 'order not found';
    else if (f.owner.toLowerCase() !== ownerKey) reply.not_canceled[id] = 'not yours';
    else reply.not_canceled[id] = f.how === 'filled' ? 'already filled' : 'already cancelled';
  }
  if (seen && (cmd.all || cmd.assetId !== undefined)) {
    for (const l of ownerOrders(s, ownerKey, cmd.assetId)) {
      const hash = dataOf(l).hash;
      if (!seen.has(hash)) {
        seen.add(hash);
        cancelOne(l, cmd.now, events, reply, cmd.reason);
      }
    }
  }
  return { events, reply };
}

function cancelOne(l: Live, now: number, events: BookEvent[], reply: CancelReply, reason = 'user'): void {
  const d = dataOf(l);
  events.push({
    type: 'OrderCancelled',
    at: now,
    orderId: d.hash,
    owner: d.owner,
    assetId: d.tokenId,
    side: d.side,
    price: d.price,
    sizeMatched: d.sizeMatched,
    remaining: d.remaining,
    held: l.held,
    release: releaseOfLive(l),
    reason,
  });
  reply.canceled.push(d.hash);
}

/** Settlement failed: the listed orders that still rest (or are held) are invalidated. */
export function decideInvalidate(s: BookState, cmd: InvalidateOrders): Decided<InvalidateReply> {
  const events: BookEvent[] = [];
  const invalidated: string[] = [];
  const not_found: string[] = [];
  const seen = new Set<string>();
  for (const id of cmd.orderIds ?? []) {
    if (seen.has(id)) continue;
    seen.add(id);
    const l = live(s, id);
    if (!l) {
      not_found.push(id);
      continue;
    }
    events.push({
      type: 'OrderInvalidated',
      ...gone(l, cmd.now ?? 0),
      reason: String(cmd.reason ?? ''),
      tradeId: String(cmd.tradeId ?? ''),
    });
    invalidated.push(id);
  }
  return { events, reply: { invalidated, not_found } };
}

function eject(
  s: BookState,
  now: number,
  reason: 'expired' | 'game_start',
  pick: (l: Live) => boolean,
  withHeld: boolean,
): Decided<EjectReply> {
  const events: BookEvent[] = [];
  const ejected: string[] = [];
  const take = (l: Live) => {
    if (!pick(l)) return;
    const g = gone(l, now);
    events.push({ type: 'OrderEjected', ...g, reason });
    ejected.push(g.orderId);
  };
  for (const o of s.orders.values()) take({ held: false, o });
  if (withHeld) for (const h of s.held.values()) take({ held: true, h });
  return { events, reply: { ejected } };
}

/** Ejects every live order, resting or held, whose signed expiration (unix s, non-zero) is ≤ now:
 *  GTD orders, and any other order that carries an expiration. */
export function decideExpire(s: BookState, now: number): Decided<EjectReply> {
  return eject(
    s,
    now,
    'expired',
    (l) => {
      const x = dataOf(l).expiration;
      return x !== 0 && x * 1000 <= now;
    },
    true,
  );
}

/** Once now ≥ startTime: ejects every resting order that entered the book before startTime. Held
 *  orders stay (ReleaseDelayed inserts them); orders that entered at or after the start stay. */
export function decideStartGame(s: BookState, now: number): Decided<EjectReply> {
  const start = s.market?.startTime;
  if (start === null || start === undefined || now < start) return { events: [], reply: { ejected: [] } };
  return eject(s, now, 'game_start', (l) => !l.held && l.o.bookedAt < start, false);
}

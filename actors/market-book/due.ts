// What is due at a command's `now` before it matches (SPEC 3.3): resting orders whose expiration
// passed (what `Expire` ejects) and, once now ≥ the market's start, resting orders booked before it
// (what `StartGame` ejects). PlaceOrder and ReleaseDelayed eject them first, in the same decision,
// so that a taker never meets a maker that is due to go, whether or not the clock ticked yet.
//
// Two min-heaps of resting orders (BookState.byExpiry by expiration, byBookedAt by bookedAt) keep
// the check O(1) when nothing is due: evolve pushes each order that rests and pops dead entries off
// the top (an entry is dead once its order is no longer booked), so the top, when there is one, is
// a live order. Dead entries further down are dropped by compaction. Derived state: fromSnapshot
// rebuilds them; the event order never depends on their layout (ejections go out by seq).
import { gone } from './removals.ts';
import type { BookEvent, BookOrder, BookState } from './types.ts';

type Key = (o: BookOrder) => number;
const expiryKey: Key = (o) => o.expiration;
const bookedKey: Key = (o) => o.bookedAt;

function push(h: BookOrder[], o: BookOrder, key: Key): void {
  let i = h.length;
  h.push(o);
  const k = key(o);
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (key(h[p]) <= k) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = o;
}

function siftDown(h: BookOrder[], i: number, key: Key): void {
  const n = h.length;
  const o = h[i];
  const k = key(o);
  for (;;) {
    let c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && key(h[c + 1]) < key(h[c])) c++;
    if (key(h[c]) >= k) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = o;
}

function popTop(h: BookOrder[], key: Key): void {
  const last = h.pop()!;
  if (h.length) {
    h[0] = last;
    siftDown(h, 0, key);
  }
}

/** Drops dead entries off the top; rebuilds the heap when dead entries outnumber the live orders. */
function tidy(h: BookOrder[], key: Key, live: number): void {
  while (h.length && !h[0].booked) popTop(h, key);
  if (h.length > 2 * live + 32) {
    const kept = h.filter((o) => o.booked);
    h.length = 0;
    for (const o of kept) h.push(o);
    for (let i = (h.length >> 1) - 1; i >= 0; i--) siftDown(h, i, key);
  }
}

/** evolve (and fromSnapshot): an order now rests. */
export function trackResting(s: BookState, o: BookOrder): void {
  if (o.expiration !== 0) push(s.byExpiry, o, expiryKey);
  push(s.byBookedAt, o, bookedKey);
}

/** evolve: after orders left the book. */
export function tidyDue(s: BookState): void {
  tidy(s.byExpiry, expiryKey, s.orders.size);
  tidy(s.byBookedAt, bookedKey, s.orders.size);
}

/** The live entries of heap `h` whose key passes `due` (which must be monotone: a key that fails
 *  means every larger key fails), without touching the heap. */
function collect(h: BookOrder[], key: Key, due: (k: number) => boolean, out: Set<BookOrder>): void {
  if (!h.length || !due(key(h[0]))) return;
  const stack = [0];
  while (stack.length) {
    const i = stack.pop()!;
    const o = h[i];
    if (!due(key(o))) continue;
    if (o.booked) out.add(o);
    const c = 2 * i + 1;
    if (c < h.length) stack.push(c);
    if (c + 1 < h.length) stack.push(c + 1);
  }
}

export interface Due {
  /** OrderEjected events: the expired ones (`expired`, as Expire emits them), then those booked
   *  before the start (`game_start`, as StartGame emits them), each group in booking order. */
  events: BookEvent[];
  /** The orders they take off the book (null when none): the sweep skips them. */
  ejected: Set<BookOrder> | null;
}

const NOTHING: Due = { events: [], ejected: null };

/** What Expire(now) then StartGame(now) would eject from the book (held orders aside: Expire still
 *  ejects those, and a release rejects an expired one). Read-only. */
export function dueAt(s: BookState, now: number): Due {
  const start = s.market?.startTime ?? null;
  const expired = s.byExpiry.length > 0 && s.byExpiry[0].expiration * 1000 <= now;
  const started = start !== null && now >= start && s.byBookedAt.length > 0 && s.byBookedAt[0].bookedAt < start;
  if (!expired && !started) return NOTHING;
  const ex = new Set<BookOrder>();
  if (expired) collect(s.byExpiry, expiryKey, (x) => x * 1000 <= now, ex);
  const pre = new Set<BookOrder>();
  if (started) collect(s.byBookedAt, bookedKey, (b) => b < start!, pre);
  const events: BookEvent[] = [];
  const out = (set: Set<BookOrder>, reason: 'expired' | 'game_start', skip: Set<BookOrder> | null) => {
    const list = [...set].filter((o) => !skip || !skip.has(o)).sort((a, b) => a.seq - b.seq);
    for (const o of list) events.push({ type: 'OrderEjected', ...gone({ held: false, o }, now), reason });
  };
  out(ex, 'expired', null);
  out(pre, 'game_start', ex);
  if (!events.length) return NOTHING;
  for (const o of pre) ex.add(o);
  return { events, ejected: ex };
}

// The book layout: per asset and side a ladder of L + 1 price levels indexed by price / gran, each
// a FIFO queue (array + head index). Cancelled or filled orders are only flagged (`booked` false)
// and skipped; a queue is reset when it empties and compacted when dead entries outnumber the
// live ones. `best` keeps the top index of every ladder. These functions mutate: evolve only.
import { ONE } from './amounts.ts';
import { BUY, type BookOrder, type BookState, type Level } from './types.ts';

export function emptyLadders(L: number): Level[][] {
  const ladders: Level[][] = [];
  for (let l = 0; l < 4; l++) {
    const levels: Level[] = new Array(L + 1);
    for (let i = 0; i <= L; i++) levels[i] = { q: [], head: 0, live: 0 };
    ladders.push(levels);
  }
  return ladders;
}

export function emptyBest(L: number): number[] {
  return [-1, L + 1, -1, L + 1];
}

/** Sets the granularity and re-files every booked order (in booking order) on the new ladders. */
export function relayout(state: BookState, gran: number): void {
  const L = ONE / gran;
  state.gran = gran;
  state.L = L;
  state.ladders = emptyLadders(L);
  state.best = emptyBest(L);
  const booked = [...state.orders.values()].filter((o) => o.booked).sort((a, b) => a.seq - b.seq);
  for (const o of booked) {
    o.booked = false;
    book(state, o);
  }
}

export function book(state: BookState, o: BookOrder): void {
  const lad = o.a * 2 + o.s;
  const idx = o.price / state.gran;
  const level = state.ladders[lad][idx];
  level.q.push(o);
  level.live++;
  o.booked = true;
  const best = state.best[lad];
  if (o.s === BUY ? idx > best : idx < best) state.best[lad] = idx;
}

export function unbook(state: BookState, o: BookOrder): void {
  if (!o.booked) return;
  o.booked = false;
  const lad = o.a * 2 + o.s;
  const idx = o.price / state.gran;
  const level = state.ladders[lad][idx];
  if (--level.live === 0) {
    level.q = [];
    level.head = 0;
    if (state.best[lad] === idx) state.best[lad] = nextBest(state.ladders[lad], idx, o.s, state.L);
    return;
  }
  const q = level.q;
  let h = level.head;
  while (!q[h].booked) h++;
  level.head = h;
  const span = q.length - h;
  if (span > 2 * level.live + 16) {
    const kept: BookOrder[] = [];
    for (let i = h; i < q.length; i++) if (q[i].booked) kept.push(q[i]);
    level.q = kept;
    level.head = 0;
  } else if (h > 64 && h * 2 > q.length) {
    level.q = q.slice(h);
    level.head = 0;
  }
}

function nextBest(levels: Level[], from: number, side: number, L: number): number {
  if (side === BUY) {
    for (let i = from - 1; i >= 0; i--) if (levels[i].live) return i;
    return -1;
  }
  for (let i = from + 1; i <= L; i++) if (levels[i].live) return i;
  return L + 1;
}

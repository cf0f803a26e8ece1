// Structural checks of a book (tests and debugging): returns the problems found, empty when sound.
import { creditFree, creditHeld } from './credit.ts';
import { ownerHashes } from './owners.ts';
import { BUY, NO, SELL, YES, type BookState, type Level } from './types.ts';

export interface CheckOptions {
  /** Count the other outcome's book as the matching engine does (a NO bid at q crosses a YES bid at p ≥ 1 − q). */
  mintMerge?: boolean;
  /**
   * Which crossings at rest to report. A remainder rests even where liquidity it may not take
   * crosses it (contracts/clob.md): the taker's own orders, or prices beyond the distortion bound
   * from its reference price. 'own' (default): a crossed pair of two owners is reported, true of
   * a book whose takers had no effective bound (no history is kept to tell the bound's crossings
   * apart); 'any': crossings are not checked.
   */
  crossed?: 'own' | 'any';
  /** The decisions' `now` so far: no expiry and no game start due at it is left on the book. */
  now?: number;
}

export function checkBook(s: BookState, opts: CheckOptions = {}): string[] {
  const bad: string[] = [];
  const { L, ladders, best } = s;
  let bookedInLadders = 0;
  for (let lad = 0; lad < 4; lad++) {
    const side = lad % 2;
    let top = side === BUY ? -1 : L + 1;
    for (let k = 0; k <= L; k++) {
      const lv = ladders[lad][k];
      let live = 0;
      for (let i = 0; i < lv.q.length; i++) {
        const o = lv.q[i];
        if (!o.booked) continue;
        if (i < lv.head) bad.push(`ladder ${lad} level ${k}: booked order before head`);
        live++;
        if (s.orders.get(o.hash) !== o) bad.push(`order ${o.hash} in a ladder but not in the map`);
        if (o.price !== k * s.gran || o.a * 2 + o.s !== lad) bad.push(`order ${o.hash} on the wrong level`);
        if (i > lv.head && lv.q[i - 1].booked && lv.q[i - 1].seq > o.seq) bad.push(`level ${k} out of time order`);
      }
      if (live !== lv.live) bad.push(`ladder ${lad} level ${k}: live ${lv.live} but ${live} booked`);
      bookedInLadders += live;
      if (live && (side === BUY ? k > top : top === L + 1)) top = k;
    }
    if (best[lad] !== top) bad.push(`ladder ${lad}: best ${best[lad]} but top ${top}`);
  }
  let booked = 0;
  for (const [hash, o] of s.orders) {
    if (o.booked) booked++;
    else bad.push(`order ${hash} in the map but not booked`);
    if (o.remaining <= 0n || o.sizeMatched < 0n || o.sizeMatched + o.remaining !== o.size)
      bad.push(`order ${hash}: matched ${o.sizeMatched} + remaining ${o.remaining} != size ${o.size}`);
    if (o.seq >= s.nextSeq) bad.push(`order ${hash}: seq ${o.seq} not below ${s.nextSeq}`);
    if (![...ownerHashes(s, o.ownerKey)].includes(hash)) bad.push(`order ${hash} missing from the owner index`);
  }
  if (booked !== bookedInLadders) bad.push(`${booked} booked orders but ${bookedInLadders} in ladders`);
  for (const [hash, h] of s.held)
    if (![...ownerHashes(s, h.order.owner.toLowerCase())].includes(hash)) bad.push(`held ${hash} missing from the owner index`);
  let indexed = 0;
  for (const v of s.byOwner.values()) indexed += typeof v === 'string' ? 1 : v.size;
  if (indexed !== s.orders.size + s.held.size) bad.push(`owner index holds ${indexed}, live orders ${s.orders.size + s.held.size}`);
  checkDue(s, bad);
  // The credit a wallet granted covers what its BUYs on credit hold (credit.ts): never short.
  const owners = new Set<string>(s.credit.keys());
  for (const o of [...s.orders.values(), ...[...s.held.values()].map((h) => h.order)])
    if (o.inBook && o.side === 'BUY') owners.add(o.owner);
  for (const owner of owners)
    if (creditFree(s, owner) < 0n)
      bad.push(`owner ${owner}: its BUYs hold ${creditHeld(s, owner)} of a credit of ${s.credit.get(owner)?.amount ?? 0n}`);
  if ((opts.crossed ?? 'own') === 'own') {
    for (const a of [YES, NO]) crossings(s, a * 2 + BUY, a * 2 + SELL, (b, k) => b >= k, `asset ${a} bid >= ask`, bad);
    if (opts.mintMerge) {
      crossings(s, YES * 2 + BUY, NO * 2 + BUY, (p, q) => p + q >= L, 'BUY YES + BUY NO >= 1', bad);
      crossings(s, YES * 2 + SELL, NO * 2 + SELL, (p, q) => p + q <= L, 'SELL YES + SELL NO <= 1', bad);
    }
  }
  if (opts.now !== undefined) {
    const start = s.market?.startTime ?? null;
    for (const o of s.orders.values()) {
      if (o.expiration !== 0 && o.expiration * 1000 <= opts.now) bad.push(`order ${o.hash} expired but rests`);
      if (start !== null && opts.now >= start && o.bookedAt < start) bad.push(`order ${o.hash} booked before the start but rests`);
    }
  }
  return bad;
}

/** Pairs of resting orders of ladders `x` and `y` whose levels cross (`cross(i, j)`) and that are
 *  not one owner's. */
function crossings(s: BookState, x: number, y: number, cross: (i: number, j: number) => boolean, what: string, bad: string[]): void {
  const levels = (lad: number) => {
    const out: Array<[number, Level]> = [];
    s.ladders[lad].forEach((lv, k) => {
      if (lv.live) out.push([k, lv]);
    });
    return out;
  };
  const ys = levels(y);
  for (const [i, a] of levels(x)) {
    for (const [j, b] of ys) {
      if (!cross(i, j)) continue;
      for (let p = a.head; p < a.q.length; p++) {
        const o = a.q[p];
        if (!o.booked) continue;
        for (let q = b.head; q < b.q.length; q++) {
          const m = b.q[q];
          if (m.booked && m.ownerKey !== o.ownerKey) {
            bad.push(`${what} at rest between two owners: ${o.hash} (${i}) and ${m.hash} (${j})`);
            return;
          }
        }
      }
    }
  }
}

/** The due indexes (due.ts) hold every resting order, and their tops are live. */
function checkDue(s: BookState, bad: string[]): void {
  const inExpiry = new Set(s.byExpiry);
  const inBooked = new Set(s.byBookedAt);
  for (const o of s.orders.values()) {
    if (o.expiration !== 0 && !inExpiry.has(o)) bad.push(`order ${o.hash} missing from the expiry index`);
    if (!inBooked.has(o)) bad.push(`order ${o.hash} missing from the booking-time index`);
  }
  const heap = (h: typeof s.byExpiry, key: (o: (typeof h)[number]) => number, name: string) => {
    if (h.length && !h[0].booked) bad.push(`${name}: dead top`);
    for (let i = 1; i < h.length; i++)
      if (key(h[(i - 1) >> 1]) > key(h[i])) {
        bad.push(`${name}: not a heap at ${i}`);
        break;
      }
  };
  heap(s.byExpiry, (o) => o.expiration, 'expiry index');
  heap(s.byBookedAt, (o) => o.bookedAt, 'booking-time index');
}

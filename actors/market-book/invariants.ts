// Structural checks of a book (tests and debugging): returns the problems found, empty when sound.
import { ownerHashes } from './owners.ts';
import { BUY, NO, SELL, YES, type BookState } from './types.ts';

export function checkBook(s: BookState, opts: { mintMerge?: boolean } = {}): string[] {
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
    if (o.remaining <= 0n || o.sizeMatched < 0n || o.sizeMatched + o.remaining !== o.size) bad.push(`order ${hash}: matched ${o.sizeMatched} + remaining ${o.remaining} != size ${o.size}`);
    if (o.seq >= s.nextSeq) bad.push(`order ${hash}: seq ${o.seq} not below ${s.nextSeq}`);
    if (![...ownerHashes(s, o.ownerKey)].includes(hash)) bad.push(`order ${hash} missing from the owner index`);
  }
  if (booked !== bookedInLadders) bad.push(`${booked} booked orders but ${bookedInLadders} in ladders`);
  for (const [hash, h] of s.held) if (![...ownerHashes(s, h.order.owner.toLowerCase())].includes(hash)) bad.push(`held ${hash} missing from the owner index`);
  let indexed = 0;
  for (const v of s.byOwner.values()) indexed += typeof v === 'string' ? 1 : v.size;
  if (indexed !== s.orders.size + s.held.size) bad.push(`owner index holds ${indexed}, live orders ${s.orders.size + s.held.size}`);
  for (const a of [YES, NO]) {
    if (best[a * 2 + BUY] >= best[a * 2 + SELL]) bad.push(`asset ${a} crossed: bid ${best[a * 2 + BUY]} >= ask ${best[a * 2 + SELL]}`);
  }
  if (opts.mintMerge) {
    if (best[YES * 2 + BUY] + best[NO * 2 + BUY] >= L && best[YES * 2 + BUY] >= 0 && best[NO * 2 + BUY] >= 0) bad.push('BUY YES + BUY NO >= 1 at rest');
    if (best[YES * 2 + SELL] + best[NO * 2 + SELL] <= L) bad.push('SELL YES + SELL NO <= 1 at rest');
  }
  return bad;
}

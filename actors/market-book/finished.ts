// The memory of recently finished orders (bounded ring, oldest evicted first): tells "already filled"
// from "already cancelled" from "order not found", and catches duplicates. A ring of hashes plus a
// Map keeps every step O(1) (evicting from the front of a Map would rescan its deleted slots). The
// orders it evicts go to the book's let-go filter (let-go.ts), which keeps it complete
// (BookState.complete) until the filter is full.
import { addLetGo, emptyLetGo } from './let-go.ts';
import type { BookState, Finish } from './types.ts';

/** How many finished order ids a market remembers. */
export const FINISHED_CAP = 10_000;

export function remember(s: BookState, hash: string, owner: string, how: Finish): void {
  const ring = s.finishedRing;
  let slot: number;
  if (ring.length < FINISHED_CAP) {
    slot = ring.length;
    ring.push(hash);
  } else {
    slot = s.finishedPos;
    const old = ring[slot];
    // An order let go: kept in the filter while it has room; beyond, one not remembered may have been placed.
    if (s.complete && !addLetGo((s.letGo ??= emptyLetGo()), old)) {
      s.complete = false;
      s.letGo = null;
    }
    if (s.finished.get(old)?.slot === slot) s.finished.delete(old);
    ring[slot] = hash;
    s.finishedPos = (slot + 1) % FINISHED_CAP;
  }
  s.finished.set(hash, { owner, how, slot });
}

/** Oldest first. */
export function finishedList(s: BookState): Array<[hash: string, owner: string, how: Finish]> {
  const out: Array<[string, string, Finish]> = [];
  const ring = s.finishedRing;
  for (let i = 0; i < ring.length; i++) {
    const slot = (s.finishedPos + i) % ring.length;
    const f = s.finished.get(ring[slot]);
    if (f && f.slot === slot) out.push([ring[slot], f.owner, f.how]);
  }
  return out;
}

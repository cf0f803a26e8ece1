// The owner index: ownerKey (lowercase address) → the hashes of its live and held orders. An owner
// with a single order maps straight to its hash; a Set is made at the second (most owners of a
// market hold one order, and a Set per order is the costliest allocation of a place).
import type { BookState } from './types.ts';

export function addOwner(s: BookState, ownerKey: string, hash: string): void {
  const cur = s.byOwner.get(ownerKey);
  if (cur === undefined) s.byOwner.set(ownerKey, hash);
  else if (typeof cur === 'string') {
    if (cur !== hash) s.byOwner.set(ownerKey, new Set([cur, hash]));
  } else cur.add(hash);
}

export function dropOwner(s: BookState, ownerKey: string, hash: string): void {
  const cur = s.byOwner.get(ownerKey);
  if (cur === undefined) return;
  if (typeof cur === 'string') {
    if (cur === hash) s.byOwner.delete(ownerKey);
    return;
  }
  cur.delete(hash);
  if (cur.size === 0) s.byOwner.delete(ownerKey);
}

/** How many live and held orders the owner has on this book. */
export function ownerCount(s: BookState, ownerKey: string): number {
  const cur = s.byOwner.get(ownerKey);
  return cur === undefined ? 0 : typeof cur === 'string' ? 1 : cur.size;
}

export function ownerHashes(s: BookState, ownerKey: string): Iterable<string> {
  const cur = s.byOwner.get(ownerKey);
  return cur === undefined ? [] : typeof cur === 'string' ? [cur] : cur;
}

// What a book's memory of finished orders let go, as a Bloom filter: a fixed number of bits, set at
// LET_GO_PROBES places per order, that says "maybe" for every order it was given and "no" for most
// others. It keeps a busy book complete (BookState.complete) past its first FINISHED_CAP finished
// orders: an order neither known nor in the filter was never given to this book, and is placed
// without a ledger read; an order the filter may hold is looked up in the ledger (CHECK_LEDGER,
// scope 'order'). Every step is a function of the orders let go, in the order they went, so replay
// and snapshots (base64) rebuild the same bits. Past LET_GO_CAP orders the filter would say "maybe"
// too often, and the book stops being complete (every unknown order read, as before the filter).

/** 2^21 bits: 256 KiB, allocated at a book's first eviction (a book that never lets one go has none). */
export const LET_GO_BITS = 1 << 21;
/** Places per order. */
export const LET_GO_PROBES = 7;
/** Orders the filter holds at most: there, a new order is a false "maybe" about 4% of the time. */
export const LET_GO_CAP = 300_000;

export interface LetGo {
  bits: Uint8Array;
  count: number;
}

export interface LetGoJson {
  bits: string;
  count: number;
}

const MASK = LET_GO_BITS - 1;

/** Two FNV-1a 32-bit hashes of the order hash (hex, but never trusted to be uniform), for double hashing. */
function probes(hash: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < hash.length; i++) {
    const c = hash.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  b = Math.imul(b ^ (b >>> 15), 0x2c1b3c6d);
  b ^= b >>> 12;
  return [a >>> 0, (b | 1) >>> 0];
}

export function emptyLetGo(): LetGo {
  return { bits: new Uint8Array(LET_GO_BITS / 8), count: 0 };
}

/** Adds an order; false when the filter is full (the order was not added: the book is no longer complete). */
export function addLetGo(f: LetGo, hash: string): boolean {
  if (f.count >= LET_GO_CAP) return false;
  const [h1, h2] = probes(hash);
  for (let i = 0; i < LET_GO_PROBES; i++) {
    const bit = (h1 + Math.imul(i, h2)) & MASK;
    f.bits[bit >>> 3] |= 1 << (bit & 7);
  }
  f.count++;
  return true;
}

/** false: this order was never added; true: it may have been. */
export function mayHaveLetGo(f: LetGo, hash: string): boolean {
  const [h1, h2] = probes(hash);
  for (let i = 0; i < LET_GO_PROBES; i++) {
    const bit = (h1 + Math.imul(i, h2)) & MASK;
    if ((f.bits[bit >>> 3] & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}

export function letGoOut(f: LetGo): LetGoJson {
  return { bits: Buffer.from(f.bits.buffer, f.bits.byteOffset, f.bits.byteLength).toString('base64'), count: f.count };
}

export function letGoIn(j: LetGoJson): LetGo {
  const bits = new Uint8Array(Buffer.from(j.bits, 'base64'));
  if (bits.length !== LET_GO_BITS / 8 || !Number.isInteger(j.count) || j.count < 0) throw new Error('not a let-go filter of this size');
  return { bits, count: j.count };
}

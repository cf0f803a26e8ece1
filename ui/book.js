// One token's view of a book, as levels keyed by price: filled from a snapshot (GET /v1/book or a
// `book` message) and changed level by level (`price_change`: the level's new aggregate size,
// "0" removes it). Prices and sizes stay the server's decimal strings; they are compared as
// integer micro-units, never as floats.

/** A non-negative decimal string ("0.41", "12") as integer micro-units. */
export function micro(text) {
  const [i, f = ''] = String(text).split('.');
  return Number(i) * 1e6 + Number((f + '000000').slice(0, 6));
}

/** Integer micro-units as the shortest decimal string. */
export function decimal(n) {
  const neg = n < 0;
  const a = Math.abs(Math.round(n));
  const f = String(a % 1e6)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return `${neg ? '-' : ''}${Math.floor(a / 1e6)}${f ? `.${f}` : ''}`;
}

class Side {
  constructor(descending) {
    this.descending = descending;
    this.levels = new Map();
  }
  clear() {
    this.levels.clear();
  }
  set(price, size) {
    const key = micro(price);
    if (micro(size) === 0) this.levels.delete(key);
    else this.levels.set(key, { price, size });
  }
  /** Best first. */
  list() {
    const keys = [...this.levels.keys()].sort((a, b) => (this.descending ? b - a : a - b));
    return keys.map((k) => this.levels.get(k));
  }
}

export class Book {
  constructor() {
    this.bids = new Side(true);
    this.asks = new Side(false);
  }
  snapshot(bids, asks) {
    this.bids.clear();
    this.asks.clear();
    for (const l of bids) this.bids.set(l.price, l.size);
    for (const l of asks) this.asks.set(l.price, l.size);
  }
  /** A `price_change` entry: side BUY is a bid level, SELL an ask level. */
  change(side, price, size) {
    (side === 'BUY' ? this.bids : this.asks).set(price, size);
  }
  view() {
    return { bids: this.bids.list(), asks: this.asks.list() };
  }
}

// A token's book kept in memory from the `market` channel (docs/ws.md): a `book` snapshot replaces
// it, each `price_change` entry sets a level's aggregate size ("0": the level is gone). Read with
// `view()` in GET /v1/book's order (bids descending, asks ascending).
import type { BookMessage, PriceChange } from '../../topics/market-channel.ts';

export interface Level {
  price: string;
  size: string;
}

export interface LocalBookView {
  market: string;
  asset_id: string;
  /** The market's seq the book is current at. */
  seq: number;
  bids: Level[];
  asks: Level[];
  tick_size: string;
  min_order_size: string;
}

export class LocalBook {
  private bids = new Map<string, string>();
  private asks = new Map<string, string>();
  seq = 0;
  tickSize: string;
  minOrderSize: string;

  constructor(
    readonly market: string,
    readonly assetId: string,
    snapshot: BookMessage,
  ) {
    this.tickSize = snapshot.tick_size;
    this.minOrderSize = snapshot.min_order_size;
    this.reset(snapshot);
  }

  /** Replaces the levels with a snapshot's. */
  reset(b: BookMessage): void {
    this.bids = new Map(b.bids.map((l) => [l.price, l.size]));
    this.asks = new Map(b.asks.map((l) => [l.price, l.size]));
    this.seq = b.seq;
    this.tickSize = b.tick_size;
    this.minOrderSize = b.min_order_size;
  }

  /** One level's new aggregate size. */
  apply(c: PriceChange, seq: number): void {
    const side = c.side === 'BUY' ? this.bids : this.asks;
    // "0.40" and "0.4" are one level: the feed writes canonical decimals, keep its spelling.
    if (Number(c.size) === 0) side.delete(c.price);
    else side.set(c.price, c.size);
    this.seq = seq;
  }

  private sorted(m: Map<string, string>, desc: boolean): Level[] {
    return [...m]
      .map(([price, size]) => ({ price, size }))
      .sort((x, y) => (desc ? Number(y.price) - Number(x.price) : Number(x.price) - Number(y.price)));
  }

  /** The best bid (highest) or ask (lowest) level, or null when that side is empty. */
  best(side: 'BUY' | 'SELL'): Level | null {
    let b: Level | null = null;
    for (const [price, size] of side === 'BUY' ? this.bids : this.asks) {
      if (!b || (side === 'BUY' ? Number(price) > Number(b.price) : Number(price) < Number(b.price))) b = { price, size };
    }
    return b;
  }

  /** Midpoint of the best bid and ask (a number), null when a side is empty. */
  midpoint(): number | null {
    const b = this.best('BUY');
    const a = this.best('SELL');
    return b && a ? (Number(b.price) + Number(a.price)) / 2 : null;
  }

  view(): LocalBookView {
    return {
      market: this.market,
      asset_id: this.assetId,
      seq: this.seq,
      bids: this.sorted(this.bids, true),
      asks: this.sorted(this.asks, false),
      tick_size: this.tickSize,
      min_order_size: this.minOrderSize,
    };
  }
}

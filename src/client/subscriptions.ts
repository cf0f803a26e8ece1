// The typed client's live channels (docs/ws.md). `MarketSubscription`: a `market` channel of some
// token ids whose reconnects resume by each market's `last_seq` and `feed` (exactly the missed
// messages, or a fresh `book` when the node cannot give them), with every message handed on once
// and in seq order, and a local book per token (`book(tokenId)`) kept from the snapshots and
// `price_change`s. `UserSubscription`: the `user` channel with the client's bearer token (a fresh
// one on a 4401), the wallet's own `order` and `trade` messages.
import type WebSocket from 'ws';
import type {
  BookMessage,
  LastTradePriceMessage,
  PriceChangeMessage,
  TickSizeChangeMessage,
  UserOrderMessage,
  UserTradeMessage,
} from '../../topics/market-channel.ts';
import { Channel, type ChannelOptions } from './channel.ts';
import { LocalBook, type LocalBookView } from './local-book.ts';

export interface MarketHandlers extends ChannelOptions {
  onBook?: (m: BookMessage) => void;
  onPriceChange?: (m: PriceChangeMessage) => void;
  onLastTrade?: (m: LastTradePriceMessage) => void;
  onTickSize?: (m: TickSizeChangeMessage) => void;
}

export interface MarketSubscriptionStats {
  /** Reconnects answered with exactly the missed messages. */
  resumedExact: number;
  /** Snapshots that replaced a book (a resume too old, of another node's feed, or a gap). */
  resyncs: number;
  /** Messages already handed on (dropped). */
  duplicates: number;
  /** Seq gaps seen (each answered by asking for a snapshot). */
  gaps: number;
}

export class MarketSubscription extends Channel {
  readonly resumes: MarketSubscriptionStats = { resumedExact: 0, resyncs: 0, duplicates: 0, gaps: 0 };
  /** Resolves once every token has its first snapshot (rejects never; unknown tokens come as onError). */
  readonly ready: Promise<void>;
  private books = new Map<string, LocalBook>();
  /** market → last seq handed on, and the feed it belongs to */
  private positions = new Map<string, { seq: number; feed: string }>();
  /** Markets whose resume was sent on this connection and not yet answered. */
  private resuming = new Set<string>();
  private markReady!: () => void;

  constructor(
    urls: string[],
    start: number,
    readonly tokenIds: string[],
    private h: MarketHandlers,
  ) {
    super(urls, start, '/ws/market', h);
    if (!tokenIds.length || tokenIds.length > 100) throw new Error('subscribe to 1 to 100 token ids');
    this.ready = new Promise((r) => {
      this.markReady = r;
    });
    this.start();
  }

  /** A token's book from memory (null before its first snapshot). */
  book(tokenId: string): LocalBookView | null {
    return this.books.get(tokenId)?.view() ?? null;
  }

  /** The live LocalBook of a token (best, midpoint). */
  localBook(tokenId: string): LocalBook | null {
    return this.books.get(tokenId) ?? null;
  }

  /** The last seq handed on of a market and its feed. */
  position(market: string): { seq: number; feed: string } | null {
    return this.positions.get(market) ?? null;
  }

  protected opened(_ws: WebSocket, reconnect: boolean): void {
    const last_seq: Record<string, number> = {};
    const feed: Record<string, string> = {};
    this.resuming.clear();
    if (reconnect) {
      for (const [m, p] of this.positions) {
        last_seq[m] = p.seq;
        feed[m] = p.feed;
        this.resuming.add(m);
      }
    }
    this.send({ type: 'subscribe', assets_ids: this.tokenIds, ...(reconnect && this.positions.size ? { last_seq, feed } : {}) });
  }

  protected received(m: any): void {
    switch (m.event_type) {
      case 'book':
        return this.onBook(m as BookMessage);
      case 'price_change':
      case 'last_trade_price':
      case 'tick_size_change':
        return this.onChange(m);
      case 'error':
        this.h.onError?.(new Error(m.message));
        return;
      default:
        return; // a message type added later
    }
  }

  private onBook(b: BookMessage): void {
    if (!this.tokenIds.includes(b.asset_id)) return;
    const known = this.books.get(b.asset_id);
    if (known) {
      known.reset(b);
      this.resumes.resyncs++;
    } else this.books.set(b.asset_id, new LocalBook(b.market, b.asset_id, b));
    this.resuming.delete(b.market);
    this.positions.set(b.market, { seq: b.seq, feed: b.feed });
    this.h.onBook?.(b);
    if (this.tokenIds.every((t) => this.books.has(t))) this.markReady();
  }

  private onChange(m: PriceChangeMessage | LastTradePriceMessage | TickSizeChangeMessage): void {
    const p = this.positions.get(m.market);
    if (!p) return; // before the market's snapshot: the snapshot is current after it
    if (m.seq <= p.seq) {
      this.resumes.duplicates++;
      return;
    }
    if (m.seq !== p.seq + 1) {
      // A gap (never expected: the node's seq is gap-free): resync from a snapshot.
      this.resumes.gaps++;
      this.positions.delete(m.market);
      this.send({ type: 'subscribe', assets_ids: this.tokenIds.filter((t) => this.books.get(t)?.market === m.market) });
      return;
    }
    if (this.resuming.delete(m.market)) this.resumes.resumedExact++;
    p.seq = m.seq;
    if (m.event_type === 'price_change') {
      for (const c of m.price_changes) this.books.get(c.asset_id)?.apply(c, m.seq);
      for (const b of this.books.values()) if (b.market === m.market) b.seq = m.seq;
      this.h.onPriceChange?.(m);
    } else if (m.event_type === 'last_trade_price') {
      for (const b of this.books.values()) if (b.market === m.market) b.seq = m.seq;
      this.h.onLastTrade?.(m);
    } else {
      const b = this.books.get(m.asset_id);
      if (b) b.tickSize = m.new_tick_size;
      for (const x of this.books.values()) if (x.market === m.market) x.seq = m.seq;
      this.h.onTickSize?.(m);
    }
  }
}

export interface UserHandlers extends ChannelOptions {
  onOrder?: (m: UserOrderMessage) => void;
  onTrade?: (m: UserTradeMessage) => void;
  /** Authenticated (the wallet), on each connection. */
  onAuth?: (wallet: string) => void;
}

/**
 * The wallet's own messages. The user channel has no resume: a reconnect starts from the node's
 * present (`onReconnect` says when; read GET /v1/orders and /v1/trades to catch up). Messages
 * seen twice (the same ledger row) are handed on once.
 */
export class UserSubscription extends Channel {
  private seen = new Set<string>();
  private seenOrder: string[] = [];

  constructor(
    urls: string[],
    start: number,
    private bearer: (fresh: boolean) => Promise<string>,
    private h: UserHandlers,
  ) {
    super(urls, start, '/ws/user', h);
    this.start();
  }

  private fresh = false;

  protected async headers(): Promise<Record<string, string>> {
    const t = await this.bearer(this.fresh);
    this.fresh = false;
    return { authorization: `Bearer ${t}` };
  }

  protected async beforeReconnect(code: number): Promise<void> {
    if (code === 4401) this.fresh = true;
  }

  protected opened(): void {}

  protected received(m: any): void {
    if (m.event_type === 'auth') {
      this.h.onAuth?.(m.wallet);
      return;
    }
    if (m.event_type === 'error') {
      this.h.onError?.(new Error(m.message));
      return;
    }
    if (m.event_type !== 'order' && m.event_type !== 'trade') return;
    const key = `${m.event_type}|${m.market}|${m.seq}|${m.id}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.seenOrder.push(key);
    if (this.seenOrder.length > 10_000) this.seen.delete(this.seenOrder.shift()!);
    if (m.event_type === 'order') this.h.onOrder?.(m);
    else this.h.onTrade?.(m);
  }
}

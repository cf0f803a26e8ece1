// The answers of the routes users poll (their parlay list, one parlay), kept per wallet in memory
// and dropped when PostgreSQL reports a change to that wallet's rows (NOTIFY parlay_reads, raised
// by triggers on parlays, parlay_legs and markets; see Migration20261123400000). A hit costs no
// database round trip. Only while the notifications are being received: otherwise every read goes
// to the database.
//
// Freshness: a change is dropped from every node's cache when its notification arrives, right
// after the commit. The node that took a webhook delivery waits for its own notifications before
// answering it (`settled`), so a read after a write through the same node sees the write; when the
// cache holds no answer and loads none (`quiet`) there is nothing the write could have left stale,
// and it does not wait. A miss that raced with a change to its wallet is answered but not kept.

export interface ReadCacheMetrics {
  hit(): void;
  miss(): void;
}

export class ParlayReadCache<V = string> {
  private entries = new Map<string, Map<string, V>>();
  /** Wallet → the change count when it last changed (for misses in flight). */
  private changedAt = new Map<string, number>();
  private changes = 0;
  private generation = 0;
  /** Misses whose load is in flight (an answer read before a commit may be kept after it). */
  private loading = 0;

  constructor(
    private live: () => boolean,
    private maxWallets = 100_000,
    private metrics?: ReadCacheMetrics,
  ) {}

  /** The cached answer `key` of `wallet`, or `load()`'s (kept unless the wallet changed meanwhile). */
  async read(wallet: string, key: string, load: () => Promise<V>): Promise<V> {
    if (!this.live() || this.maxWallets <= 0) return load();
    const w = wallet.toLowerCase();
    const hit = this.entries.get(w)?.get(key);
    if (hit !== undefined) {
      this.metrics?.hit();
      return hit;
    }
    this.metrics?.miss();
    const since = this.changes;
    const generation = this.generation;
    this.loading++;
    let text: V;
    try {
      text = await load();
    } finally {
      this.loading--;
    }
    if (generation === this.generation && (this.changedAt.get(w) ?? -1) <= since && this.live()) this.keep(w, key, text);
    return text;
  }

  private keep(w: string, key: string, text: V): void {
    let e = this.entries.get(w);
    if (!e) {
      if (this.entries.size >= this.maxWallets) this.entries.delete(this.entries.keys().next().value!);
      e = new Map();
      this.entries.set(w, e);
    }
    e.set(key, text);
  }

  /** A notification: a lower-cased wallet, or `*` for everything. */
  changed(payload: string): void {
    if (payload === '*' || !payload) return this.clear();
    this.changes++;
    this.entries.delete(payload);
    this.changedAt.set(payload, this.changes);
    if (this.changedAt.size > 50_000) this.clear();
  }

  /** Everything may have changed (a missed notification, `*`). */
  clear(): void {
    this.generation++;
    this.entries.clear();
    this.changedAt.clear();
  }

  /**
   * No answer kept and none loading: nothing here can show what was there before a commit that
   * just ended, so its writer need not wait for the commit's notifications before answering (a
   * read from now on loads what was committed; the notifications, when they come, drop it).
   */
  get quiet(): boolean {
    return this.entries.size === 0 && this.loading === 0;
  }

  get size(): number {
    return this.entries.size;
  }
}

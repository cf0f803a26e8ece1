// The answers of the routes users poll (their parlay list, one parlay), kept per wallet in memory
// and dropped when PostgreSQL reports a change to that wallet's rows (NOTIFY parlay_reads, raised
// by triggers on parlays, parlay_legs and markets; see Migration20261123400000). A hit costs no
// database round trip. Only while the notifications are being received: otherwise every read goes
// to the database.
//
// Freshness: a change is dropped from every node's cache when its notification arrives, right
// after the commit. The node that took a webhook delivery waits for its own notifications before
// answering it (`settled`), so a read after a write through the same node sees the write.
// A miss that raced with a change to its wallet is answered but not kept.

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
    const text = await load();
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

  get size(): number {
    return this.entries.size;
  }
}

// Wallet balances without a chain read per order. The Wallet actor keeps each wallet's balance (and
// standing allowance) per asset; this node-side watcher keeps it current: the first time the node
// takes an order for a (wallet, mint) it reads the token account once (the Reserve carries that
// read) and subscribes to the account's changes on the RPC's WebSocket (`accountSubscribe`), each
// change going to the actor as a SeeBalance at its slot (newest slot wins there). Bounded: at most
// `max` subscriptions per node, the least recently used dropped (and unsubscribed) first. A change
// made while the WebSocket was down is never notified (the client subscribes again, the RPC sends
// nothing until the next change), so an account neither read nor notified for `refreshMs` is read
// again when it next trades — in the background: the order goes on against what the actor knows.
import type { ChainGateway, TokenHolding } from '../chain/gateway.ts';

export interface BalanceWatchDeps {
  chain: () => ChainGateway | null;
  /** Tells the actor that keeps the balance what the chain shows now (a SeeBalance of `asset`): the
   *  wallet's, or for an outcome token the book of its `market`. */
  seen(wallet: string, asset: string, h: TokenHolding, market?: string): Promise<void>;
  /** subscriptions kept at most (CLOB_BALANCE_WATCH_MAX) */
  max: number;
  /** a chain read that takes longer fails (default 3 s) */
  readTimeoutMs?: number;
  /** after a failed first read, the next order tries again no sooner (default 1 s) */
  retryMs?: number;
  /** an account neither read nor notified this long is read again, in the background, when it next trades (default 60 s) */
  refreshMs?: number;
  log?: { warn(o: object, m: string): void };
}

interface Watched {
  stop: (() => Promise<void>) | null;
  /** this node has read the account once (the actor has it, the subscription keeps it current) */
  seeded: boolean;
  failedAt: number;
  /** when the chain last told this node about the account (a read or a notification) */
  seenAt: number;
  refreshing: boolean;
  /** an outcome token's market: its balance is kept by that book */
  market?: string;
  /** the account as the chain last told this node (a read or a notification) */
  last?: TokenHolding;
}

/** A (wallet, mint) balance as the wallet's commands carry it (topics/wallet-commands.ts). */
export function balanceOf(h: TokenHolding) {
  return { amount: h.amount.toString(), slot: h.slot, delegate: h.delegate, delegatedAmount: h.delegatedAmount.toString() };
}

export class BalanceWatch {
  /** Insertion order is recency: a touched entry moves to the end, the first one goes first. */
  private readonly watched = new Map<string, Watched>();
  private stopped = false;

  constructor(private readonly d: BalanceWatchDeps) {}

  get size(): number {
    return this.watched.size;
  }

  /**
   * What to seed the wallet's actor with: the first time this node sees (wallet, mint), one read
   * (and the account is watched from then on); null once seeded, or when the read failed (the actor
   * may know the balance already: an RPC outage then stops nobody it knows).
   */
  async seed(wallet: string, mint: string, asset: string, market?: string): Promise<TokenHolding | null> {
    const w = this.touch(wallet, mint, asset, market);
    if (!w) return this.read(wallet, mint).catch(() => null); // stopped: no watching, plain reads
    if (Date.now() - w.failedAt < (this.d.retryMs ?? 1000)) return null;
    if (w.seeded) {
      if (Date.now() - w.seenAt >= (this.d.refreshMs ?? 60_000)) this.refresh(wallet, mint, asset, w);
      return null;
    }
    try {
      return await this.read(wallet, mint); // marks it seeded when watched; unwatched (no subscriptions): read every time
    } catch {
      w.failedAt = Date.now();
      return null;
    }
  }

  /** One read of the chain, now (before rejecting for balance, or for a wallet the actor does not know). */
  async read(wallet: string, mint: string): Promise<TokenHolding> {
    const chain = this.d.chain();
    if (!chain) throw new Error('no chain RPC is configured');
    const ms = this.d.readTimeoutMs ?? 3000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const h = await Promise.race([
        chain.holding(wallet, mint),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer from the chain RPC in ${ms} ms`)), ms);
        }),
      ]);
      const w = this.watched.get(`${wallet}|${mint}`);
      if (w?.stop) {
        w.seeded = true; // watched and now read: the actor is about to have it
        w.seenAt = Date.now();
        if (!w.last || h.slot >= w.last.slot) w.last = h;
      }
      return h;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The account as the chain last told this node, while it is watched (null: not watched, or not told yet). */
  known(wallet: string, mint: string): TokenHolding | null {
    return this.watched.get(`${wallet}|${mint}`)?.last ?? null;
  }

  private touch(wallet: string, mint: string, asset: string, market: string | undefined): Watched | null {
    if (this.stopped) return null;
    const k = `${wallet}|${mint}`;
    const got = this.watched.get(k);
    if (got) {
      this.watched.delete(k);
      this.watched.set(k, got);
      return got;
    }
    const w: Watched = { stop: null, seeded: false, failedAt: -Infinity, seenAt: -Infinity, refreshing: false, market };
    w.stop = this.subscribe(wallet, mint, asset, w);
    this.watched.set(k, w);
    while (this.watched.size > this.d.max) {
      const [oldest, gone] = this.watched.entries().next().value!;
      this.watched.delete(oldest);
      this.unsubscribe(gone);
    }
    return w;
  }

  /** Reads a seeded account again without holding up the order, and tells the actor what it shows. */
  private refresh(wallet: string, mint: string, asset: string, w: Watched): void {
    if (w.refreshing) return;
    w.refreshing = true;
    this.read(wallet, mint)
      .then((h) => this.d.seen(wallet, asset, h, w.market))
      .catch(() => {
        w.failedAt = Date.now();
      })
      .finally(() => {
        w.refreshing = false;
      });
  }

  private subscribe(wallet: string, mint: string, asset: string, w: Watched): (() => Promise<void>) | null {
    const chain = this.d.chain();
    if (!chain?.watchHolding) return null;
    try {
      return chain.watchHolding(wallet, mint, (h) => {
        w.seenAt = Date.now();
        if (!w.last || h.slot >= w.last.slot) w.last = h;
        this.d
          .seen(wallet, asset, h, w.market)
          .catch((err) => this.d.log?.warn({ err, wallet, asset }, 'a balance change could not be told'));
      });
    } catch (err) {
      this.d.log?.warn({ err, wallet, mint }, 'could not watch a token account');
      return null;
    }
  }

  private unsubscribe(w: Watched): void {
    w.stop?.().catch(() => undefined);
  }

  /** Unsubscribes from every account. */
  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.watched.values()];
    this.watched.clear();
    await Promise.all(all.map((w) => w.stop?.().catch(() => undefined)));
  }
}

// The live state behind the WebSocket channels (issue 18, item 2; docs/ws.md): per subscribed
// market the aggregated resting depth as the book actor's depthOf shows it, kept from the public
// ledger (table ledger_messages, tailed by every node: any node serves any subscription), a
// gap-free channel seq and a bounded ring of recent messages for resumes; and each connected
// wallet's own order and trade messages.
import type { MarketTokens } from './catalog.ts';
import { canonicalBook, type PriceLevel } from './market-data.ts';
import { decimal } from './service.ts';
import { createHash } from 'node:crypto';
import { WakeLoop } from '../store/wake-loop.ts';
import type { LedgerRow } from './ledger-stream.ts';
import type { LedgerOrdersMessage, LedgerPayload, LedgerTradesMessage } from '../../topics/ledger.ts';

import type { Db } from '../db.ts';
import type { BookMessage, LastTradePriceMessage, PriceChangeMessage, TickSizeChangeMessage } from '../../topics/market-channel.ts';
import { decimalToMicro } from '../../topics/units.ts';
const ONE = 1_000_000;
/** Fields every market message gets from emit. */
type Header = 'market' | 'seq' | 'timestamp';

/** Who receives a market's messages (a connection): one serialized text per message. */
/** `bytes`: the text's UTF-8 length when the sender knows it (one message to many listeners). */
export interface FeedListener {
  deliver(text: string, bytes?: number): void;
}

export interface FeedOptions {
  db: () => Db;
  mintMerge: boolean;
  /** Messages kept per market for resumes. */
  ringSize: number;
  /** A market without subscribers keeps its state (and ring) this long, for reconnects. */
  lingerMs: number;
  /** Tail period when nothing pokes (other nodes' writes). */
  pollMs: number;
  nodeId: string;
  log: { error(o: object, m?: string): void };
  now?: () => number;
}

/** "0.41" → 410000 (ledger prices and sizes: decimal strings of at most 6 places). */
export function micro(v: string): bigint {
  const n = decimalToMicro(String(v));
  if (n === null) throw new Error(`not a ledger decimal: ${v}`);
  return n;
}

interface Resting {
  asset: string;
  side: 'BUY' | 'SELL';
  price: number;
  original: bigint;
  matched: bigint;
}
type MarketRow = MarketTokens;

/** One market's channel state. */
class MarketState {
  seq = 0;
  ring: { seq: number; text: string }[] = [];
  readonly subscribers = new Set<FeedListener>();
  readonly orders = new Map<string, Resting>();
  /** asset id → side → price (micro) → size (micro) */
  readonly levels = new Map<string, { BUY: Map<number, bigint>; SELL: Map<number, bigint> }>();
  idleSince = 0;

  constructor(
    public m: MarketRow,
    public ordersPos: number,
    public tradesPos: number,
    readonly feed: string,
  ) {
    this.levels.set(m.yes_token_id, { BUY: new Map(), SELL: new Map() });
    this.levels.set(m.no_token_id, { BUY: new Map(), SELL: new Map() });
  }

  other(asset: string) {
    return asset === this.m.yes_token_id ? this.m.no_token_id : this.m.yes_token_id;
  }

  /** Adds `delta` of a resting order to the views it shows in; records the touched levels. */
  add(
    o: Pick<Resting, 'asset' | 'side' | 'price'>,
    delta: bigint,
    mintMerge: boolean,
    touched: Map<string, [string, 'BUY' | 'SELL', number]>,
  ) {
    if (delta === 0n) return;
    const bump = (asset: string, side: 'BUY' | 'SELL', price: number) => {
      const l = this.levels.get(asset)![side];
      const n = (l.get(price) ?? 0n) + delta;
      if (n <= 0n) l.delete(price);
      else l.set(price, n);
      touched.set(`${asset}|${side}|${price}`, [asset, side, price]);
    };
    bump(o.asset, o.side, o.price);
    if (mintMerge) bump(this.other(o.asset), o.side === 'BUY' ? 'SELL' : 'BUY', ONE - o.price);
  }

  best(asset: string, side: 'BUY' | 'SELL'): string {
    let b: number | null = null;
    for (const p of this.levels.get(asset)![side].keys()) if (b === null || (side === 'BUY' ? p > b : p < b)) b = p;
    return b === null ? '0' : decimal(b);
  }

  view(asset: string): { bids: PriceLevel[]; asks: PriceLevel[] } {
    const l = this.levels.get(asset)!;
    const out = (m: Map<number, bigint>, desc: boolean) =>
      [...m].sort((a, b) => (desc ? b[0] - a[0] : a[0] - b[0])).map(([p, n]) => ({ price: decimal(p), size: decimal(n) }));
    return { bids: out(l.BUY, true), asks: out(l.SELL, false) };
  }
}

export class MarketFeed {
  private states = new Map<string, MarketState>();
  /** Markets asked for and not yet bootstrapped, with who waits for their snapshots. */
  private pending = new Map<string, { row: MarketRow; waiters: { l: FeedListener; assets: string[] }[] }>();
  private loop: WakeLoop;
  private started = false;
  private feeds = 0;
  private boot = Date.now().toString(36);
  /** Wallets (lower case) with user-channel connections, and the markets' cursors tailed for them. */
  private wallets = new Map<string, Set<FeedListener>>();
  private userCursors = new Map<string, { orders: number; trades: number }>();
  private userMarketsAt = 0;
  private userSince = 0;
  private ticksAt = 0;
  /** Token id → its market (the ids and condition never change; tick and minimum size are read at bootstrap). */
  private known = new Map<string, MarketRow>();
  /** Subscriptions with a resume: answered with the missed messages, or with a snapshot (metrics). */
  readonly resumes = { exact: 0, snapshot: 0 };

  constructor(private o: FeedOptions) {
    this.loop = new WakeLoop(() => this.tick(), {
      idleMs: o.pollMs,
      gapMs: Math.min(20, o.pollMs),
      onError: (err) => o.log.error({ err }, 'market feed tail failed; retrying'),
    });
  }

  private now() {
    return (this.o.now ?? Date.now)();
  }

  /** Something was committed on this node: tail now. */
  poke(): void {
    if (this.started) this.loop.poke();
  }

  stop(): Promise<void> {
    this.started = false;
    return this.loop.stop();
  }

  private ensureRunning() {
    if (!this.started) {
      this.started = true;
      this.loop.start();
    }
  }

  /** Markets of these token ids (unknown ones left out). */
  async resolve(tokens: string[]): Promise<Map<string, MarketRow>> {
    const out = new Map<string, MarketRow>();
    const ask = tokens.filter((t) => {
      const m = this.known.get(t);
      if (m) out.set(t, m);
      return !m;
    });
    const rows: MarketRow[] = ask.length
      ? await this.o
          .db()
          .execute(
            'select condition_id, yes_token_id, no_token_id, tick_size::text as tick_size, min_size::text as min_size from markets where yes_token_id in (?) or no_token_id in (?)',
            [ask, ask],
          )
      : [];
    if (this.known.size > 20_000) this.known.clear(); // bounded: a cache of token → market (never of unknown tokens)
    for (const r of rows) {
      for (const t of [r.yes_token_id, r.no_token_id]) {
        this.known.set(t, r);
        if (ask.includes(t)) out.set(t, r);
      }
    }
    return out;
  }

  /**
   * Subscribes `l` to a market for these of its assets: a `book` per asset, or, with `lastSeq`
   * (and `feed`, when given, naming this state) still in the ring, exactly the missed messages.
   */
  subscribe(l: FeedListener, m: MarketRow, assets: string[], resume?: { lastSeq: number; feed?: string }): void {
    this.ensureRunning();
    const s = this.states.get(m.condition_id);
    if (s) {
      s.subscribers.add(l);
      if (resume && (!resume.feed || resume.feed === s.feed) && resume.lastSeq <= s.seq) {
        const first = s.ring.length ? s.ring[0].seq : s.seq + 1;
        if (resume.lastSeq >= first - 1) {
          this.resumes.exact++;
          for (const r of s.ring) if (r.seq > resume.lastSeq) l.deliver(r.text);
          return;
        }
      }
      if (resume) this.resumes.snapshot++;
      for (const a of assets) l.deliver(this.bookText(s, a));
      return;
    }
    if (resume) this.resumes.snapshot++; // not followed here (yet): a snapshot once bootstrapped
    const p = this.pending.get(m.condition_id) ?? { row: m, waiters: [] };
    p.waiters.push({ l, assets });
    this.pending.set(m.condition_id, p);
    this.loop.poke();
  }

  unsubscribe(l: FeedListener, market: string): void {
    const s = this.states.get(market);
    if (s) {
      s.subscribers.delete(l);
      if (!s.subscribers.size) s.idleSince = this.now();
    }
    const p = this.pending.get(market);
    if (p) p.waiters = p.waiters.filter((w) => w.l !== l);
  }

  /** A wallet's user channel: its own order and trade messages from now on. */
  addWallet(wallet: string, l: FeedListener): void {
    const k = wallet.toLowerCase();
    if (!this.wallets.size) {
      this.userCursors.clear();
      this.userMarketsAt = 0;
      this.userSince = this.now();
    }
    const set = this.wallets.get(k) ?? new Set();
    set.add(l);
    this.wallets.set(k, set);
    this.ensureRunning();
    this.loop.poke();
  }

  removeWallet(wallet: string, l: FeedListener): void {
    const k = wallet.toLowerCase();
    const set = this.wallets.get(k);
    set?.delete(l);
    if (set && !set.size) this.wallets.delete(k);
  }

  /** Counts, for tests and metrics. */
  stats() {
    let ring = 0;
    for (const s of this.states.values()) ring += s.ring.length;
    return { markets: this.states.size, pending: this.pending.size, ringMessages: ring, wallets: this.wallets.size };
  }

  /** The seq and feed of a market's channel (null: not followed on this node). */
  position(market: string): { seq: number; feed: string } | null {
    const s = this.states.get(market);
    return s ? { seq: s.seq, feed: s.feed } : null;
  }

  private bookText(s: MarketState, asset: string): string {
    const v = s.view(asset);
    const tick = decimal(s.m.tick_size);
    const min = decimal(s.m.min_size);
    const hash = createHash('sha256')
      .update(
        canonicalBook({ market: s.m.condition_id, asset_id: asset, bids: v.bids, asks: v.asks, tick_size: tick, min_order_size: min }),
      )
      .digest('hex');
    return JSON.stringify({
      event_type: 'book',
      market: s.m.condition_id,
      asset_id: asset,
      seq: s.seq,
      timestamp: String(this.now()),
      hash,
      bids: v.bids,
      asks: v.asks,
      tick_size: tick,
      min_order_size: min,
      feed: s.feed,
    } satisfies BookMessage);
  }

  private emit(
    s: MarketState,
    body: Omit<PriceChangeMessage, Header> | Omit<LastTradePriceMessage, Header> | Omit<TickSizeChangeMessage, Header>,
  ): void {
    s.seq += 1;
    const { event_type, ...rest } = body;
    const text = JSON.stringify({ event_type, market: s.m.condition_id, seq: s.seq, timestamp: String(this.now()), ...rest });
    s.ring.push({ seq: s.seq, text });
    if (s.ring.length > this.o.ringSize) s.ring.splice(0, s.ring.length - this.o.ringSize);
    const bytes = Buffer.byteLength(text);
    for (const l of s.subscribers) l.deliver(text, bytes);
  }

  /** One tail round: bootstrap asked-for markets, apply the ledger rows after every cursor. */
  private async tick(): Promise<boolean> {
    const now = this.now();
    for (const [id, s] of this.states) if (!s.subscribers.size && now - s.idleSince > this.o.lingerMs) this.states.delete(id);
    for (const [id, p] of [...this.pending]) {
      if (!p.waiters.length) {
        this.pending.delete(id);
        continue;
      }
      let s = this.states.get(id); // bootstrapped while these waited
      if (!s) {
        s = await this.bootstrap(p.row);
        this.states.set(id, s);
      } // a failure keeps them waiting: the next round retries
      if (this.pending.get(id) === p) this.pending.delete(id);
      for (const w of p.waiters) {
        s.subscribers.add(w.l);
        for (const a of w.assets) w.l.deliver(this.bookText(s, a));
      }
      if (!s.subscribers.size) s.idleSince = now;
    }
    if (!this.wallets.size) this.userCursors.clear(); // no user channel: only the subscribed markets are tailed
    if (!this.states.size && !this.wallets.size) return false;
    if (this.wallets.size) await this.refreshUserMarkets();
    // The cursors: each followed market's own positions, and the user channel's of every market.
    const cursors = new Map<string, { orders: number; trades: number }>();
    for (const [id, c] of this.userCursors) cursors.set(id, { ...c });
    for (const [id, s] of this.states) {
      const c = cursors.get(id);
      cursors.set(
        id,
        c
          ? { orders: Math.min(c.orders, s.ordersPos), trades: Math.min(c.trades, s.tradesPos) }
          : { orders: s.ordersPos, trades: s.tradesPos },
      );
    }
    const limit = 1000;
    const list = [...cursors].flatMap(([market, c]) => [
      { market, topic: 'orders', seq: c.orders },
      { market, topic: 'trades', seq: c.trades },
    ]);
    if (!list.length) return false;
    const rows: LedgerRow[] = await this.o.db().execute(
      `select l.market, l.topic, l.seq::text as seq, l.type, l.owner_lc, l.payload, l.at
       from jsonb_to_recordset(?::jsonb) as c(market text, topic text, seq bigint)
       cross join lateral (select * from ledger_messages x where x.market = c.market and x.topic = c.topic and x.seq > c.seq order by x.seq limit ?) l
       order by l.market, l.topic desc, l.seq`, // per market: orders (the book) before trades
      [JSON.stringify(list), limit],
    );
    const more = new Map<string, number>();
    for (const r of rows) more.set(`${r.market}|${r.topic}`, (more.get(`${r.market}|${r.topic}`) ?? 0) + 1);
    const userRows: LedgerRow[] = [];
    for (const r of rows) {
      const seq = Number(r.seq);
      const payload = typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload;
      const s = this.states.get(r.market);
      if (s) {
        const pos = r.topic === 'orders' ? s.ordersPos : s.tradesPos;
        if (seq === pos + 1) {
          const msg = { type: r.type, ...payload } as LedgerPayload;
          if (r.topic === 'orders') {
            s.ordersPos = seq;
            this.applyOrder(s, msg as LedgerOrdersMessage);
          } else {
            s.tradesPos = seq;
            this.applyTrade(s, msg as LedgerTradesMessage);
          }
        }
      }
      const u = this.userCursors.get(r.market);
      if (u && seq === u[r.topic as 'orders' | 'trades'] + 1) {
        u[r.topic as 'orders' | 'trades'] = seq;
        userRows.push({ ...r, payload });
      }
    }
    if (userRows.length && this.wallets.size) await this.deliverUser(userRows);
    await this.checkTicks();
    return [...more.values()].some((n) => n >= limit);
  }

  /** The market's resting orders (open_orders LIVE) and its ledger positions, from one statement (one snapshot). */
  private async bootstrap(m: MarketRow): Promise<MarketState> {
    const [r] = await this.o.db().execute(
      `select (select coalesce(max(seq), 0)::text from ledger_messages where market = ? and topic = 'orders') as o,
              (select coalesce(max(seq), 0)::text from ledger_messages where market = ? and topic = 'trades') as t,
              (select row_to_json(x) from (select condition_id, yes_token_id, no_token_id, tick_size::text as tick_size, min_size::text as min_size from markets where condition_id = ?) x) as m,
              (select coalesce(json_agg(json_build_object('id', id, 'asset_id', asset_id, 'side', side, 'price', price, 'original', original_size::text, 'matched', size_matched::text)), '[]'::json)
                 from open_orders where market = ? and status = 'LIVE') as orders`,
      [m.condition_id, m.condition_id, m.condition_id, m.condition_id],
    );
    const row = (typeof r.m === 'string' ? JSON.parse(r.m) : r.m) ?? m;
    const s = new MarketState(row, Number(r.o), Number(r.t), `${this.o.nodeId}.${this.boot}.${(++this.feeds).toString(36)}`);
    // A new feed counts on from the number of ledger rows it starts after: at most one message per
    // row, so a seq of an earlier feed of this market is at most that (a resume with it gets a snapshot).
    s.seq = Number(r.o) + Number(r.t);
    const orders = typeof r.orders === 'string' ? JSON.parse(r.orders) : r.orders;
    const touched = new Map();
    for (const o of orders) {
      const x: Resting = {
        asset: o.asset_id,
        side: o.side,
        price: Number(o.price),
        original: BigInt(o.original),
        matched: BigInt(o.matched),
      };
      s.orders.set(o.id, x);
      s.add(x, x.original - x.matched, this.o.mintMerge, touched);
    }
    return s;
  }

  /** An order message of the ledger: the depth it changes, as one price_change (nothing when the book did not change). */
  private applyOrder(s: MarketState, p: LedgerOrdersMessage): void {
    const touched = new Map<string, [string, 'BUY' | 'SELL', number]>();
    if (p.type === 'order_placed') {
      const od = p.order;
      if (od.status === 'LIVE' && (od.asset_id === s.m.yes_token_id || od.asset_id === s.m.no_token_id)) {
        const x: Resting = {
          asset: od.asset_id,
          side: od.side,
          price: Number(micro(od.price)),
          original: micro(od.original_size),
          matched: micro(od.size_matched),
        };
        const before = s.orders.get(od.id);
        if (before) s.add(before, before.matched - before.original, this.o.mintMerge, touched);
        s.orders.set(od.id, x);
        s.add(x, x.original - x.matched, this.o.mintMerge, touched);
      }
    } else if (p.type !== 'order_delayed') {
      const x = s.orders.get(p.order_id);
      if (x) {
        const matched = micro(p.size_matched);
        const gone = p.type !== 'order_updated' || p.status !== 'LIVE';
        const left = gone ? 0n : x.original - matched;
        s.add(x, left - (x.original - x.matched), this.o.mintMerge, touched);
        if (gone) s.orders.delete(p.order_id);
        else x.matched = matched;
      }
    }
    if (!touched.size) return;
    const price_changes = [...touched.values()].map(([asset, side, price]) => ({
      asset_id: asset,
      price: decimal(price),
      size: decimal(s.levels.get(asset)![side].get(price) ?? 0n),
      side,
      best_bid: s.best(asset, 'BUY'),
      best_ask: s.best(asset, 'SELL'),
    }));
    this.emit(s, { event_type: 'price_change', price_changes });
  }

  private applyTrade(s: MarketState, p: LedgerTradesMessage): void {
    if (p.type !== 'trade_matched') return;
    const t = p.trade;
    this.emit(s, {
      event_type: 'last_trade_price',
      asset_id: t.asset_id,
      price: t.price,
      size: t.size,
      side: t.side,
      fee_rate_bps: String(t.fee_rate_bps),
    });
  }

  /** The catalog's tick of followed markets: a change is a tick_size_change per asset. */
  private async checkTicks(): Promise<void> {
    if (!this.states.size || this.now() - this.ticksAt < 1000) return;
    this.ticksAt = this.now();
    const rows = await this.o
      .db()
      .execute('select condition_id, tick_size::text as tick_size, min_size::text as min_size from markets where condition_id in (?)', [
        [...this.states.keys()],
      ]);
    for (const r of rows) {
      const s = this.states.get(r.condition_id);
      if (!s) continue;
      s.m.min_size = r.min_size;
      if (s.m.tick_size === r.tick_size) continue;
      const old = decimal(s.m.tick_size);
      s.m.tick_size = r.tick_size;
      for (const a of [s.m.yes_token_id, s.m.no_token_id])
        this.emit(s, { event_type: 'tick_size_change', asset_id: a, old_tick_size: old, new_tick_size: decimal(r.tick_size) });
    }
  }

  /**
   * The user channel follows every market of the catalog while a wallet is connected: markets
   * seen first start after their last line from before the channel started (`userSince`, when its
   * first wallet was added), or at 0 when created after it. Not at their end when this runs: the
   * first run comes with the feed's next turn, and a line committed in between (an order its
   * wallet placed right after the `auth` answer, on a busy node) would have been skipped. Markets
   * already followed are not looked at again (their lines since `userSince` are many by then).
   */
  private async refreshUserMarkets(): Promise<void> {
    if (this.now() - this.userMarketsAt < 1000 && this.userCursors.size) return;
    this.userMarketsAt = this.now();
    const rows = await this.o.db().execute(
      `select m.condition_id as market, (m.created_at >= to_timestamp(? / 1000.0)) as fresh,
         (select coalesce(max(seq), 0)::text from ledger_messages l
           where l.market = m.condition_id and l.topic = 'orders' and l.at < to_timestamp(? / 1000.0)) as o,
         (select coalesce(max(seq), 0)::text from ledger_messages l
           where l.market = m.condition_id and l.topic = 'trades' and l.at < to_timestamp(? / 1000.0)) as t
       from markets m where m.condition_id <> all(?::text[])`,
      [this.userSince, this.userSince, this.userSince, `{${[...this.userCursors.keys()].map((k) => JSON.stringify(k)).join(',')}}`],
    );
    for (const r of rows) {
      if (this.userCursors.has(r.market)) continue;
      const fresh = r.fresh === true || r.fresh === 't';
      this.userCursors.set(
        r.market,
        fresh && this.userCursors.size ? { orders: 0, trades: 0 } : { orders: Number(r.o), trades: Number(r.t) },
      );
    }
  }

  /** Each connected wallet's own order and trade messages of these rows. */
  private async deliverUser(rows: LedgerRow[]): Promise<void> {
    const orderIds = new Set<string>();
    const tradeIds = new Set<string>();
    for (const r of rows) {
      const p = messageOf(r);
      if (isOrders(p)) {
        if (r.owner_lc && this.wallets.has(r.owner_lc)) orderIds.add(orderIdOf(p));
      } else tradeIds.add(tradeIdOf(p));
    }
    const orders = new Map<string, any>();
    if (orderIds.size) {
      for (const o of await this.o
        .db()
        .execute('select id, asset_id, side, price, original_size::text as original_size from open_orders where id in (?)', [
          [...orderIds],
        ]))
        orders.set(o.id, o);
    }
    const trades = new Map<string, any>();
    if (tradeIds.size) {
      for (const t of await this.o
        .db()
        .execute(`select id, market, asset_id, side, size::text as size, price, owner, maker_orders from trades where id in (?)`, [
          [...tradeIds],
        ]))
        trades.set(t.id, t);
    }
    for (const r of rows) {
      const p = messageOf(r);
      const at = String(new Date(r.at).getTime());
      if (isOrders(p)) {
        const to = r.owner_lc ? this.wallets.get(r.owner_lc) : undefined;
        if (!to) continue;
        const id = orderIdOf(p);
        const type =
          p.type === 'order_placed' || p.type === 'order_delayed' ? 'PLACEMENT' : p.type === 'order_updated' ? 'UPDATE' : 'CANCELLATION';
        let shown;
        if ('order' in p) {
          const o = p.order;
          shown = {
            asset_id: o.asset_id,
            side: o.side,
            price: o.price,
            original_size: o.original_size,
            size_matched: o.size_matched,
            status: o.status,
          };
        } else {
          const o = orders.get(id); // an update names the order only: the rest from the read model
          if (!o) continue;
          shown = {
            asset_id: o.asset_id,
            side: o.side,
            price: decimal(o.price),
            original_size: decimal(o.original_size),
            size_matched: p.size_matched,
            status: p.status,
          };
        }
        const reason = 'reason' in p ? p.reason : null;
        const tradeId = 'trade_id' in p ? p.trade_id : undefined;
        const text = JSON.stringify({
          event_type: 'order',
          type,
          id,
          market: r.market,
          ...shown,
          ...(reason ? { reason } : {}),
          ...(tradeId ? { trade_id: tradeId } : {}),
          seq: Number(r.seq),
          timestamp: at,
        });
        for (const l of to) l.deliver(text);
      } else {
        const id = tradeIdOf(p);
        const t = trades.get(id);
        if (!t) continue;
        const makers: any[] = typeof t.maker_orders === 'string' ? JSON.parse(t.maker_orders) : t.maker_orders;
        const status = p.type === 'trade_matched' ? p.trade.status : p.status;
        const hash = p.type === 'trade_matched' ? p.trade.transaction_hash : p.transaction_hash;
        // The taker sees every maker order of its trade; a maker only its own.
        const parties = new Map<string, any[] | null>();
        parties.set(String(t.owner).toLowerCase(), null);
        for (const m of makers) {
          const k = String(m.owner).toLowerCase();
          if (parties.get(k) === null) continue;
          parties.set(k, [...(parties.get(k) ?? []), m]);
        }
        for (const [wallet, own] of parties) {
          const to = this.wallets.get(wallet);
          if (!to) continue;
          const text = JSON.stringify({
            event_type: 'trade',
            id,
            market: r.market,
            asset_id: t.asset_id,
            side: t.side,
            size: decimal(t.size),
            price: decimal(t.price),
            status,
            maker_orders: (own ?? makers).map((m) => ({
              order_id: m.order_id,
              owner: m.owner,
              matched_amount: decimal(m.matched_amount),
              price: decimal(m.price),
              asset_id: m.asset_id,
              outcome: m.outcome,
              side: m.side,
            })),
            trader_side: own ? 'MAKER' : 'TAKER',
            ...(hash ? { transaction_hash: hash } : {}),
            seq: Number(r.seq),
            timestamp: at,
          });
          for (const l of to) l.deliver(text);
        }
      }
    }
  }
}

/** A stored ledger row as the message it is (topics/ledger.ts): its type is a column, the rest its payload. */
function messageOf(r: LedgerRow): LedgerPayload {
  const payload = typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload;
  return { type: r.type, ...payload } as LedgerPayload;
}
const isOrders = (p: LedgerPayload): p is LedgerOrdersMessage => p.type.startsWith('order_');
const orderIdOf = (p: LedgerOrdersMessage) => ('order' in p ? p.order.id : p.order_id);
const tradeIdOf = (p: LedgerTradesMessage) => (p.type === 'trade_matched' ? p.trade.id : p.trade_id);

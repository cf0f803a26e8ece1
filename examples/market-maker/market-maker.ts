// Reference market maker on the typed client (src/client/): quotes both sides of one market around a
// fair price that follows the live book (the `market` channel's local book, src/client/
// subscriptions.ts: the others' midpoint, its own quotes taken out), requotes as soon as a
// price_change moves the others' best bid or ask and on a timer (cancel the old quotes, reading both `canceled` and
// `not_canceled`, then post new ones), keeps its own record of fills from the ledger stream by
// `maker_orders` (and its taker trades), reconciles that record against `GET /v1/trades`, and rides
// through a node going away (the client moves to the next node URL on 503 and connection errors;
// the stream resumes from its Last-Event-ID). The token renews on the client's timer.
// With `takeEvery` it also crosses the spread now and then (at the live book's best): a load
// generator. It never polls the book over REST: `stats.rest` counts its REST calls by route.
import {
  ClobClient,
  decimal,
  micro,
  type BookMarket,
  type LedgerEvent,
  type MarketSubscription,
  type TradeSummary,
  type WalletKey,
} from '../../src/client/index.ts';

export interface MarketMakerOptions {
  urls: string | string[];
  wallet: WalletKey;
  /** The market's condition id. */
  market: string;
  /** Fair YES price (decimal); default: the book's last price, else its reference price, else 0.5. */
  mid?: string;
  /** Distance of the first quote from the fair price, in ticks (default 2). */
  halfSpreadTicks?: number;
  /** Quotes per side (default 2), one tick apart. */
  levels?: number;
  /** Size of each quote in tokens (default '5'). */
  size?: string;
  /** Requote period (default 1000 ms). */
  refreshMs?: number;
  /** Random walk of the fair price, in ticks per requote (default 0). */
  walkTicks?: number;
  /** Cross the spread (a marketable FOK order) on every n-th requote, 0 = never (default 0). */
  takeEvery?: number;
  /** Share of the token lifetime after which it is renewed (default 0.5). */
  renewAt?: number;
  log?: (line: string) => void;
  /** Random source (tests pass a seeded one). */
  random?: () => number;
  /** Move the fair price to the others' midpoint of the live book (default true). */
  followBook?: boolean;
  /** Least time between two requotes the live book triggers (default 100 ms). */
  minRequoteMs?: number;
}

export interface Fill {
  tradeId: string;
  orderId: string;
  role: 'MAKER' | 'TAKER';
  amount: string;
  price: string;
}

export interface MarketMakerStats {
  cycles: number;
  placed: number;
  recovered: number;
  rejected: Record<string, number>;
  canceled: number;
  notCanceled: Record<string, number>;
  takes: number;
  errors: number;
  fills: number;
  fromStream: number;
  fromRest: number;
  signIns: number;
  reconnects: number;
  failovers: number;
  startedAt: number;
  stoppedAt?: number;
  /** Requotes a price_change of the live book triggered (the others' best bid or ask moved). */
  liveRequotes: number;
  /** REST calls by `METHOD route` (no book reads: the book is the live one). */
  rest: Record<string, number>;
}

interface Quote {
  id: string;
  side: 'BUY' | 'SELL';
  price: string;
  size: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class MarketMaker {
  readonly client: ClobClient;
  /** Its own record: `<trade id>:<order id>` → fill. */
  readonly fills = new Map<string, Fill>();
  readonly stats: MarketMakerStats;
  private quotes = new Map<string, Quote>();
  private running = false;
  private loop: Promise<void> | null = null;
  private streamTask: Promise<void> | null = null;
  private streamAbort = new AbortController();
  private market!: BookMarket;
  private fair = 0n;
  private rnd: () => number;
  private lastEventId: string | undefined;
  private readonly me: string;
  /** The live `market` channel of the YES token. */
  live: MarketSubscription | null = null;
  private liveAbort = new AbortController();
  /** The others' best bid and ask when the quotes were last placed. */
  private quotedTop = '';
  private wake: (() => void) | null = null;
  private woken = false;
  private timerCycles = 0;

  constructor(private o: MarketMakerOptions) {
    this.client = new ClobClient({
      urls: o.urls,
      wallet: o.wallet,
      renewAt: o.renewAt ?? 0.5,
      attempts: 12,
      retryDelayMs: 100,
      onResponse: (r) => {
        const k = `${r.method.toUpperCase()} ${r.route}`;
        this.stats.rest[k] = (this.stats.rest[k] ?? 0) + 1;
      },
    });
    this.me = this.client.address.toLowerCase();
    this.rnd = o.random ?? Math.random;
    this.stats = {
      cycles: 0,
      placed: 0,
      recovered: 0,
      rejected: {},
      canceled: 0,
      notCanceled: {},
      takes: 0,
      errors: 0,
      fills: 0,
      fromStream: 0,
      fromRest: 0,
      signIns: 0,
      reconnects: 0,
      failovers: 0,
      startedAt: Date.now(),
      liveRequotes: 0,
      rest: {},
    };
  }

  get address(): string {
    return this.client.address;
  }

  private log(line: string) {
    this.o.log?.(`[mm ${this.address.slice(0, 6)}] ${line}`);
  }

  /** Signs in, opens the stream (so that no fill after this point is missed), and starts quoting. */
  async start(): Promise<void> {
    await this.client.signIn();
    const m = await this.client.market(this.o.market);
    if (!m) throw new Error(`market ${this.o.market} not found`);
    this.market = m;
    this.fair = micro(this.o.mid ?? m.last_price ?? m.reference_price ?? '0.5');
    let opened: () => void;
    const open = new Promise<void>((r) => {
      opened = r;
    });
    this.streamTask = this.follow(() => opened());
    await Promise.race([open, sleep(10_000)]);
    this.live = this.client.subscribeMarket([m.yes_token_id], {
      signal: this.liveAbort.signal,
      onPriceChange: () => this.onBookChange(),
      onError: (e) => this.log(`market channel: ${e.message}`),
      onReconnect: (code) => this.log(`market channel reconnects (${code})`),
    });
    await Promise.race([this.live.ready, sleep(10_000)]);
    this.running = true;
    this.loop = this.run();
  }

  private async follow(opened: () => void): Promise<void> {
    try {
      for await (const ev of this.client.stream(this.o.market, {
        from: 'now',
        signal: this.streamAbort.signal,
        onOpen: opened,
        onReconnect: (why) => {
          this.stats.reconnects++;
          this.log(`stream reconnects (${why}) after ${this.lastEventId}`);
        },
      })) {
        this.onEvent(ev);
      }
    } catch (e) {
      if (!this.streamAbort.signal.aborted) this.log(`stream failed: ${(e as Error).message}`);
    }
  }

  private onEvent(ev: LedgerEvent): void {
    this.lastEventId = ev.id;
    if (ev.type !== 'trade_matched') return;
    for (const f of this.fillsOf(ev.message.trade)) if (this.record(f)) this.stats.fromStream++;
  }

  /** My part of a trade (a stream `trade` or a TradeSummary): one fill per maker order of mine, and the taker side if mine. */
  private fillsOf(t: Pick<TradeSummary, 'id' | 'taker_order_id' | 'owner' | 'size' | 'price' | 'maker_orders'>): Fill[] {
    const out: Fill[] = [];
    for (const m of t.maker_orders) {
      if (m.owner.toLowerCase() === this.me)
        out.push({ tradeId: t.id, orderId: m.order_id, role: 'MAKER', amount: m.matched_amount, price: m.price });
    }
    if (t.owner.toLowerCase() === this.me)
      out.push({ tradeId: t.id, orderId: t.taker_order_id, role: 'TAKER', amount: t.size, price: t.price });
    return out;
  }

  private record(f: Fill): boolean {
    const k = `${f.tradeId}:${f.orderId}`;
    if (this.fills.has(k)) return false;
    this.fills.set(k, f);
    this.stats.fills++;
    return true;
  }

  /**
   * The others' best bid and ask on the live YES book: each level less the size of its own quotes
   * there (a quote partly filled leaves less than its size: the level counts as taken out).
   */
  othersTop(): { bid: bigint | null; ask: bigint | null } {
    const b = this.live?.book(this.market.yes_token_id);
    if (!b) return { bid: null, ask: null };
    const mine = new Map<string, bigint>();
    for (const q of this.quotes.values()) {
      const k = `${q.side}|${micro(q.price)}`;
      mine.set(k, (mine.get(k) ?? 0n) + micro(q.size));
    }
    const top = (levels: { price: string; size: string }[], side: 'BUY' | 'SELL') => {
      for (const l of levels) if (micro(l.size) > (mine.get(`${side}|${micro(l.price)}`) ?? 0n)) return micro(l.price);
      return null;
    };
    return { bid: top(b.bids, 'BUY'), ask: top(b.asks, 'SELL') };
  }

  private topKey(): string {
    const t = this.othersTop();
    return `${t.bid}|${t.ask}`;
  }

  /** A price_change: requote now when the others' best bid or ask moved. */
  private onBookChange(): void {
    if (!this.running || (this.o.followBook ?? true) === false || this.topKey() === this.quotedTop) return;
    this.woken = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    const refresh = this.o.refreshMs ?? 1000;
    let live = false;
    // The timer runs from the last timer cycle: requotes of the live book do not push it back.
    let timerDue = 0;
    while (this.running) {
      const started = Date.now();
      if (!live) timerDue = started + refresh;
      try {
        await this.cycle(live);
      } catch (e) {
        this.stats.errors++;
        this.log(`cycle failed: ${(e as Error).message}`);
      }
      this.stats.signIns = this.client.signIns;
      this.stats.failovers = this.client.http.failovers;
      // Until the timer, or earlier when the live book moved (not sooner than minRequoteMs).
      await sleep(Math.max(0, (this.o.minRequoteMs ?? 100) - (Date.now() - started)));
      live = false;
      for (;;) {
        const left = timerDue - Date.now();
        if (!this.running || left <= 0) break;
        if (this.woken) {
          this.woken = false;
          // A wake whose top is what was quoted (its own quotes' messages came before their answers): wait on.
          if (this.topKey() !== this.quotedTop) {
            live = true;
            break;
          }
          continue;
        }
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          this.wake = () => {
            clearTimeout(t);
            r();
          };
        });
        this.wake = null;
      }
    }
  }

  private tick(): bigint {
    return micro(this.market.tick_size);
  }

  /**
   * One requote: move the fair price (to the others' live midpoint, then the walk on a timer
   * cycle), cancel the old quotes, post new ones, maybe take. `live`: the live book triggered it.
   */
  async cycle(live = false): Promise<void> {
    const tick = this.tick();
    const top = this.othersTop();
    this.quotedTop = `${top.bid}|${top.ask}`;
    let fair = this.fair;
    if ((this.o.followBook ?? true) && top.bid !== null && top.ask !== null && top.bid < top.ask) fair = (top.bid + top.ask) / 2n;
    const walk = this.o.walkTicks ?? 0;
    if (walk && !live) fair += BigInt(Math.round((this.rnd() * 2 - 1) * walk)) * tick;
    const lo = tick * 5n;
    const hi = 1_000_000n - tick * 5n;
    fair = fair < lo ? lo : fair > hi ? hi : fair;
    fair -= fair % tick;
    // The book moved but not the fair price: the quotes stand (two makers would otherwise requote
    // each other's requotes without end).
    if (live && fair === this.fair && this.quotes.size) return;
    this.fair = fair;
    this.stats.cycles++;
    if (live) this.stats.liveRequotes++;

    await this.cancelQuotes();
    const half = BigInt(this.o.halfSpreadTicks ?? 2);
    const size = this.o.size ?? '5';
    for (let i = 0n; i < BigInt(this.o.levels ?? 2); i++) {
      for (const side of ['BUY', 'SELL'] as const) {
        const price = side === 'BUY' ? this.fair - (half + i) * tick : this.fair + (half + i) * tick;
        if (price <= 0n || price >= 1_000_000n) continue;
        await this.post(side, decimal(price), size, 'GTC');
      }
    }
    const every = this.o.takeEvery ?? 0;
    if (!live) this.timerCycles++;
    if (every && !live && this.timerCycles % every === 0) await this.take();
  }

  /** Its resting quotes (side, price), best first per side. */
  quoted(): { side: 'BUY' | 'SELL'; price: string }[] {
    return [...this.quotes.values()].map((q) => ({ side: q.side, price: q.price }));
  }

  private async post(side: 'BUY' | 'SELL', price: string, size: string, type: 'GTC' | 'FOK'): Promise<string | null> {
    const order = this.client.buildOrder({ tokenId: this.market.yes_token_id, side, price, size, feeRateBps: this.market.taker_fee_bps });
    try {
      const r = await this.client.placeOrder(order, type);
      this.stats.placed++;
      if (r.recovered) this.stats.recovered++;
      // Even a (partly) matched GTC order may rest its remainder: cancelled on the next cycle
      // (`not_canceled: already filled` when nothing was left).
      if (type === 'GTC') this.quotes.set(r.orderID, { id: r.orderID, side, price, size });
      return r.orderID;
    } catch (e: any) {
      const code = e?.code ?? 'error';
      this.stats.rejected[code] = (this.stats.rejected[code] ?? 0) + 1;
      if (!e?.code) throw e;
      return null;
    }
  }

  /** Crosses the spread against the other side's best level of the live book (a FOK, so it fills whole or not at all). */
  private async take(): Promise<void> {
    const b = this.live?.localBook(this.market.yes_token_id);
    if (!b) return;
    const buy = this.rnd() < 0.5;
    const level = b.best(buy ? 'SELL' : 'BUY');
    if (!level) return;
    const size = Math.max(1, Math.min(Number(level.size), Math.ceil(this.rnd() * Number(this.o.size ?? '5'))));
    this.stats.takes++;
    await this.post(buy ? 'BUY' : 'SELL', level.price, String(size), 'FOK');
  }

  /** Cancels the resting quotes; reads both lists: `canceled` and `not_canceled` (already filled, already cancelled, ...). */
  private async cancelQuotes(): Promise<void> {
    const ids = [...this.quotes.keys()];
    if (!ids.length) return;
    const r = await this.client.cancelBatch(ids);
    for (const id of r.canceled) this.quotes.delete(id);
    this.stats.canceled += r.canceled.length;
    for (const [id, reason] of Object.entries(r.not_canceled)) {
      // Filled (the stream brings the fill), cancelled by an earlier attempt of this very request
      // before a failover, or unknown: in every case it no longer rests for us.
      this.stats.notCanceled[reason] = (this.stats.notCanceled[reason] ?? 0) + 1;
      this.quotes.delete(id);
    }
  }

  /**
   * Compares its record with the ledger's trades (`GET /v1/trades` of this market, by
   * `maker_orders`), adds what the stream has not brought yet, and says what differed.
   */
  async reconcile(): Promise<{ missing: Fill[]; extra: Fill[] }> {
    const ledger = new Map<string, Fill>();
    for (const t of await this.client.allTrades({ market: this.o.market }))
      for (const f of this.fillsOf(t)) ledger.set(`${f.tradeId}:${f.orderId}`, f);
    const missing = [...ledger.entries()].filter(([k]) => !this.fills.has(k)).map(([, f]) => f);
    const extra = [...this.fills.entries()].filter(([k]) => !ledger.has(k)).map(([, f]) => f);
    for (const f of missing) if (this.record(f)) this.stats.fromRest++;
    return { missing, extra };
  }

  /**
   * Stops quoting, cancels what rests, lets the stream catch up with the ledger (up to `settleMs`),
   * reconciles, and closes. Returns the last reconciliation.
   */
  async stop(settleMs = 15_000): Promise<{ missing: Fill[]; extra: Fill[] }> {
    this.running = false;
    this.wake?.();
    await this.loop;
    for (let i = 0; i < 5; i++) {
      try {
        const r = await this.client.cancelAll();
        this.stats.canceled += r.canceled.length;
        for (const reason of Object.values(r.not_canceled)) this.stats.notCanceled[reason] = (this.stats.notCanceled[reason] ?? 0) + 1;
        this.quotes.clear();
        break;
      } catch (e) {
        this.log(`cancel-all failed: ${(e as Error).message}`);
        await sleep(1000);
      }
    }
    // The stream should bring every fill by itself; wait for it before falling back on REST.
    const deadline = Date.now() + settleMs;
    let last = { missing: [] as Fill[], extra: [] as Fill[] };
    for (;;) {
      const ledger = new Map<string, Fill>();
      for (const t of await this.client.allTrades({ market: this.o.market }))
        for (const f of this.fillsOf(t)) ledger.set(`${f.tradeId}:${f.orderId}`, f);
      const behind = [...ledger.keys()].filter((k) => !this.fills.has(k)).length;
      if (!behind || Date.now() > deadline) break;
      await sleep(300);
    }
    last = await this.reconcile();
    this.streamAbort.abort();
    this.liveAbort.abort();
    await this.streamTask;
    this.client.close();
    this.stats.signIns = this.client.signIns;
    this.stats.failovers = this.client.http.failovers;
    this.stats.stoppedAt = Date.now();
    return last;
  }
}

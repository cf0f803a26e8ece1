// Typed client of the order book (contracts/clob.md): wallet sign-in with the token renewed on a
// timer well inside its lifetime, signed orders, every /v1 route, the ledger stream with resume,
// and failover across the nodes of a cluster.
import bs58 from 'bs58';
import { signDetached } from '../clob/ed25519.ts';
import type { z } from 'zod';
import type * as api from '../api/schemas.ts';
import type { heartbeatStatusSchema } from '../api/heartbeats.ts';
import type { mintMergeResult } from '../api/market-makers.ts';
import type { marketDataResponse } from '../api/market-data.ts';
import type { TradeQuery } from '../api/clob.ts';
import { ApiError, expect, Transport, type TransportOptions } from './http.ts';
import { addressOf, buildOrder, orderIdOf, type OrderInput, type OrderType, type SignedOrder, type WalletKey } from './orders.ts';
import { parseSse, type LedgerEvent } from './stream.ts';
import { MarketSubscription, UserSubscription, type MarketHandlers, type UserHandlers } from './subscriptions.ts';

export interface ClobClientOptions extends TransportOptions {
  wallet: WalletKey;
  /** Renew the token when this share of its lifetime has passed (default 0.5: well inside it). */
  renewAt?: number;
  /** `X-Internal-Token`, only for `sizeUpdate` (the settlement executor). */
  internalToken?: string;
}

/** GET /v1/trades parameters (src/api/clob.ts). */
export type TradeParams = TradeQuery;

export interface StreamOptions {
  /** Where a new stream starts: `now` (default) or `beginning`; ignored when resuming. */
  from?: 'now' | 'beginning';
  /** Resume after this position (the id of the last event handled). */
  lastEventId?: string;
  signal?: AbortSignal;
  /** Called on each reconnection (reason, the position it resumes after). */
  onReconnect?: (reason: string, lastEventId: string | undefined) => void;
  /** Called when a connection is open, with the position it starts after. */
  onOpen?: (position: string | undefined) => void;
}

/** GET /v1/book's answer. */
export type OrderBookSummary = z.output<typeof marketDataResponse.book>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ClobClient {
  readonly http: Transport;
  readonly address: string;
  /** How many times the token was obtained (the first sign-in included). */
  signIns = 0;
  private token: string | null = null;
  private renewBy = 0;
  private expiresAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private pending: Promise<string> | null = null;
  private lastTimestamp = 0;
  private closed = false;

  constructor(private o: ClobClientOptions) {
    this.http = new Transport(o);
    this.address = addressOf(o.wallet);
  }

  // ---- sign-in ------------------------------------------------------------------------------

  /** The message a wallet signs to sign in. */
  static authMessage(address: string, timestamp: number): string {
    return `clob-auth:v1:${address}:${timestamp}`;
  }

  /** Signs a fresh message and trades it for a bearer token; schedules the next renewal. */
  signIn(): Promise<string> {
    this.pending ??= (async () => {
      try {
        for (let attempt = 1; ; attempt++) {
          // Each message is accepted once: never sign the same second twice (another client of the
          // same wallet may have taken a second: then a later one, still well inside the 60 s skew).
          const timestamp = Math.max(
            Math.floor(Date.now() / 1000),
            this.lastTimestamp + (attempt === 1 ? 1 : 1 + Math.floor(Math.random() * 3)),
          );
          this.lastTimestamp = timestamp;
          const signature = bs58.encode(
            signDetached(Buffer.from(ClobClient.authMessage(this.address, timestamp), 'utf8'), this.o.wallet.secretKey),
          );
          const a = await this.http.request<api.AccessToken>('POST', '/v1/auth/token', {
            body: { address: this.address, timestamp, signature },
          });
          // A retried sign-in whose first try landed is refused as reused: sign again.
          if (a.status === 401 && attempt < 10 && /already used/.test((a.body as any)?.message ?? '')) continue;
          const t = expect(a);
          const now = Date.now();
          this.token = t.access_token;
          this.expiresAt = now + t.expires_in * 1000;
          this.renewBy = now + t.expires_in * 1000 * (this.o.renewAt ?? 0.5);
          this.signIns++;
          this.schedule(this.renewBy - now);
          return t.access_token;
        }
      } finally {
        this.pending = null;
      }
    })();
    return this.pending;
  }

  private schedule(ms: number) {
    if (this.timer) clearTimeout(this.timer);
    if (this.closed) return;
    this.timer = setTimeout(
      () => {
        this.signIn().catch(() => this.schedule(1000)); // a node away: try again soon, the token still runs
      },
      Math.max(0, ms),
    );
    this.timer.unref();
  }

  /** A token valid for a while yet (signs in when there is none or it is due). */
  async bearer(): Promise<string> {
    if (this.token && Date.now() < this.renewBy) return this.token;
    if (this.token && Date.now() < this.expiresAt - 5000) {
      void this.signIn().catch(() => undefined);
      return this.token;
    }
    return this.signIn();
  }

  /** Stops the renewal timer. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async authed<T = any>(
    method: string,
    route: string,
    r: { params?: Record<string, string>; query?: Record<string, any>; body?: unknown } = {},
    ok = [200],
  ): Promise<{ status: number; body: T }> {
    for (let i = 0; ; i++) {
      const a = await this.http.request<T>(method, route, { ...r, headers: { authorization: `Bearer ${await this.bearer()}` } });
      if (a.status === 401 && i === 0) {
        await this.signIn();
        continue;
      } // expired or from another secret: once more
      if (!ok.includes(a.status)) expect(a, ok);
      return a;
    }
  }

  // ---- public reads -------------------------------------------------------------------------

  async config(): Promise<api.ClobConfig> {
    return expect(await this.http.request('GET', '/v1/config'));
  }

  async market(conditionId: string): Promise<api.BookMarket | null> {
    const a = await this.http.request('GET', '/v1/markets/:conditionId', { params: { conditionId } });
    return a.status === 404 ? null : expect(a);
  }

  /** The public catalog (`GET /api/markets/`). */
  async markets(status?: 'open' | 'closed' | 'resolved'): Promise<api.Market[]> {
    return expect<{ data: api.Market[] }>(await this.http.request('GET', '/api/markets/', { query: { status } })).data;
  }

  // ---- public market data (docs/market-data.md) -----------------------------------------------

  /** A token's aggregated book (bids best first, asks best first), its market's seq and hash; null for an unknown token. */
  async book(tokenId: string): Promise<OrderBookSummary | null> {
    const a = await this.http.request('GET', '/v1/book', { query: { token_id: tokenId } });
    return a.status === 404 ? null : expect(a);
  }

  /** Many tokens' books at once (at most 100). */
  async books(tokenIds: string[]): Promise<OrderBookSummary[]> {
    return expect(await this.http.request('POST', '/v1/books', { body: tokenIds.map((token_id) => ({ token_id })) }));
  }

  /** BUY: the best bid, SELL: the best ask (null when that side is empty). */
  async price(tokenId: string, side: 'BUY' | 'SELL'): Promise<string | null> {
    return expect<{ price: string | null }>(await this.http.request('GET', '/v1/price', { query: { token_id: tokenId, side } })).price;
  }

  async prices(q: { token_id: string; side: 'BUY' | 'SELL' }[]): Promise<Record<string, Partial<Record<'BUY' | 'SELL', string | null>>>> {
    return expect(await this.http.request('POST', '/v1/prices', { body: q }));
  }

  async midpoint(tokenId: string): Promise<string | null> {
    return expect<{ mid: string | null }>(await this.http.request('GET', '/v1/midpoint', { query: { token_id: tokenId } })).mid;
  }

  async midpoints(tokenIds: string[]): Promise<Record<string, string | null>> {
    return expect(await this.http.request('POST', '/v1/midpoints', { body: tokenIds.map((token_id) => ({ token_id })) }));
  }

  async spread(tokenId: string): Promise<string | null> {
    return expect<{ spread: string | null }>(await this.http.request('GET', '/v1/spread', { query: { token_id: tokenId } })).spread;
  }

  async spreads(tokenIds: string[]): Promise<Record<string, string | null>> {
    return expect(await this.http.request('POST', '/v1/spreads', { body: tokenIds.map((token_id) => ({ token_id })) }));
  }

  async tickSize(tokenId: string): Promise<string> {
    return expect<{ minimum_tick_size: string }>(await this.http.request('GET', '/v1/tick-size', { query: { token_id: tokenId } }))
      .minimum_tick_size;
  }

  /** Last trade price per bucket of `fidelity` minutes, in the token's terms. */
  async pricesHistory(q: {
    market: string;
    interval?: '1m' | '1h' | '6h' | '1d' | '1w' | 'max';
    fidelity?: number;
    startTs?: number;
    endTs?: number;
  }): Promise<{ t: number; p: string }[]> {
    return expect<{ history: { t: number; p: string }[] }>(await this.http.request('GET', '/v1/prices-history', { query: q })).history;
  }

  // ---- orders -------------------------------------------------------------------------------

  /** Builds and signs an order with this client's wallet. */
  buildOrder(o: OrderInput): SignedOrder {
    return buildOrder(this.o.wallet, o);
  }

  static orderId = orderIdOf;

  /**
   * Posts a signed order. Rejections throw ApiError with the contract's `code`. An order whose
   * first attempt landed before its node went away comes back as DUPLICATE_ORDER on the retry:
   * then its ledger state is read and returned (`recovered: true`).
   */
  async placeOrder(order: SignedOrder, orderType: OrderType = 'GTC'): Promise<api.PlaceResult & { recovered?: boolean }> {
    for (let i = 0; ; i++) {
      const a = await this.http.request<any>('POST', '/v1/order', {
        body: { order, orderType },
        headers: { authorization: `Bearer ${await this.bearer()}` },
      });
      if (a.status === 401 && i === 0) {
        await this.signIn();
        continue;
      }
      if (a.status === 200) return a.body;
      if (a.status === 400 && a.body?.code === 'DUPLICATE_ORDER' && (a.attempts > 1 || i > 0)) {
        const id = orderIdOf(order);
        const led = await this.openOrder(id);
        if (led) {
          const status =
            ({ LIVE: 'live', MATCHED: 'matched', DELAYED: 'delayed' } as Record<string, 'live' | 'matched' | 'delayed'>)[led.status] ??
            'unmatched';
          return {
            success: true,
            errorMsg: '',
            orderID: id,
            status,
            makingAmount: '0',
            takingAmount: '0',
            tradeIDs: led.associate_trades,
            warnings: [],
            recovered: true,
          };
        }
      }
      throw new ApiError(a.status, a.body?.code ?? a.body?.error ?? 'error', a.body?.errorMsg ?? a.body?.message ?? 'rejected', a.body);
    }
  }

  /** Builds, signs and posts. */
  async postOrder(o: OrderInput, orderType: OrderType = 'GTC') {
    return this.placeOrder(this.buildOrder(o), orderType);
  }

  async cancel(orderID: string): Promise<api.CancelResult> {
    return (await this.authed('POST', '/v1/orders/cancel', { body: { orderID } })).body;
  }

  async cancelBatch(orderIDs: string[]): Promise<api.CancelResult> {
    return (await this.authed('POST', '/v1/orders/cancel-batch', { body: { orderIDs } })).body;
  }

  async cancelAll(): Promise<api.CancelResult> {
    return (await this.authed('POST', '/v1/orders/cancel-all')).body;
  }

  async cancelMarket(market: string, assetId?: string): Promise<api.CancelResult> {
    return (await this.authed('POST', '/v1/orders/cancel-market', { body: { market, ...(assetId ? { asset_id: assetId } : {}) } })).body;
  }

  /** The caller's orders on the book. */
  async orders(f: { market?: string } = {}): Promise<api.BookOrder[]> {
    return (await this.authed('GET', '/v1/orders', { query: f })).body;
  }

  async ordersValueRange(minValue: number | string): Promise<api.BookOrder[]> {
    return (await this.authed('GET', '/v1/orders/value-range', { query: { min_value: minValue } })).body;
  }

  /** One order on the book; null when not there (a fully matched order is gone). */
  async order(id: string): Promise<api.BookOrder | null> {
    const a = await this.authed('GET', '/v1/orders/:id', { params: { id } }, [200, 404]);
    return a.status === 404 ? null : a.body;
  }

  async openOrders(f: { market?: string } = {}): Promise<api.OpenOrder[]> {
    return (await this.authed('GET', '/v1/open-orders', { query: f })).body;
  }

  async openOrder(id: string): Promise<api.OpenOrder | null> {
    const a = await this.authed('GET', '/v1/open-orders/:id', { params: { id } }, [200, 404]);
    return a.status === 404 ? null : a.body;
  }

  async trades(p: TradeParams = {}): Promise<api.TradeSummary[]> {
    return (await this.authed('GET', '/v1/trades', { query: p })).body;
  }

  /**
   * Every trade of the caller matching `p`, paging back by `before` (unix seconds; trades of one
   * second seen twice are kept once).
   */
  async allTrades(p: Omit<TradeParams, 'limit' | 'before'> = {}): Promise<api.TradeSummary[]> {
    const seen = new Map<string, api.TradeSummary>();
    let before: number | undefined;
    for (;;) {
      const page = await this.trades({ ...p, limit: 500, before });
      let fresh = 0;
      for (const t of page)
        if (!seen.has(t.id)) {
          seen.set(t.id, t);
          fresh++;
        }
      if (page.length < 500) break;
      const oldest = Math.min(...page.map((t) => Number(t.match_time)));
      if (!fresh) throw new Error(`more than 500 trades within second ${oldest}: narrow the filters`);
      before = oldest + 1;
    }
    return [...seen.values()];
  }

  async lastTrade(market: string): Promise<api.LastTrade | null> {
    const a = await this.authed('GET', '/v1/trades/last', { query: { market } }, [200, 404]);
    return a.status === 404 ? null : a.body;
  }

  /** Internal (settlement executor): invalidates resting orders of a failed settlement. */
  async sizeUpdate(
    b: { trade_id: string; orders: string[]; reason?: string },
    internalToken = this.o.internalToken,
  ): Promise<api.SizeUpdateResult> {
    if (!internalToken) throw new Error('sizeUpdate needs the internal token');
    return expect(await this.http.request('POST', '/v1/orders/size-update', { body: b, headers: { 'x-internal-token': internalToken } }));
  }

  // ---- heartbeats and the market makers' area --------------------------------------------------

  /** A heartbeat: arms cancel-on-disconnect (`enabled: false` opts out). */
  async heartbeat(enabled = true): Promise<z.output<typeof heartbeatStatusSchema>> {
    return (await this.authed('POST', '/v1/heartbeats', { body: { enabled } })).body;
  }

  async heartbeatStatus(): Promise<z.output<typeof heartbeatStatusSchema>> {
    return (await this.authed('GET', '/v1/heartbeats')).body;
  }

  /** mint_tokens: `amount` micro-units of collateral → as many YES and NO (only when same-side matching is off). */
  async mint(market: string, amount: bigint | string): Promise<z.output<typeof mintMergeResult>> {
    return (await this.authed('POST', '/v1/market-makers/mint', { body: { market, amount: amount.toString() } })).body;
  }

  /** merge_tokens: `amount` YES + NO → as much collateral (only when same-side matching is off). */
  async merge(market: string, amount: bigint | string): Promise<z.output<typeof mintMergeResult>> {
    return (await this.authed('POST', '/v1/market-makers/merge', { body: { market, amount: amount.toString() } })).body;
  }

  // ---- the WebSocket channels (docs/ws.md) ----------------------------------------------------

  /**
   * The `market` channel of these token ids (1 to 100): a `book` per token, then every change, in
   * seq order and once each, across reconnects (resumed by `last_seq` and `feed`, on the node it
   * was on first, then across the client's node URLs); `book(tokenId)` reads the local book.
   */
  subscribeMarket(tokenIds: string[], h: MarketHandlers = {}): MarketSubscription {
    return new MarketSubscription(this.http.urls, Math.max(0, this.http.urls.indexOf(this.http.url)), tokenIds, h);
  }

  /** The `user` channel: this wallet's own `order` and `trade` messages (signs in when needed). */
  subscribeUser(h: UserHandlers = {}): UserSubscription {
    return new UserSubscription(
      this.http.urls,
      Math.max(0, this.http.urls.indexOf(this.http.url)),
      (fresh) => (fresh ? this.signIn() : this.bearer()),
      h,
    );
  }

  // ---- the stream ---------------------------------------------------------------------------

  /**
   * A market's ledger messages, in order, exactly once: after a dropped connection or a node
   * going away it reconnects (next node, fresh token) with Last-Event-ID set to the last event
   * yielded. Ends when `signal` aborts.
   */
  async *stream(market: string, s: StreamOptions = {}): AsyncGenerator<LedgerEvent> {
    let last = s.lastEventId;
    let delay = 100;
    while (!s.signal?.aborted && !this.closed) {
      let reason = 'ended';
      try {
        const url = this.http.url + this.http.path('/v1/stream', {}, { market, ...(last ? {} : { from: s.from ?? 'now' }) });
        const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${await this.bearer()}` };
        if (last) headers['last-event-id'] = last;
        const res = await fetch(url, { headers, signal: s.signal });
        if (res.status === 401) {
          await this.signIn();
          continue;
        }
        if (res.status !== 200 || !res.body) {
          const text = await res.text().catch(() => '');
          if (res.status >= 400 && res.status < 500) throw new ApiError(res.status, 'stream_refused', text, text);
          throw new Error(`stream answered ${res.status}`);
        }
        delay = 100;
        for await (const ev of parseSse(res.body)) {
          if (ev.comment !== undefined && !ev.data) {
            // `: stream of <market> from <position>`: where this connection starts.
            const m = /from (o\d+\.t\d+)$/.exec(ev.comment);
            if (m && !last) last = m[1];
            if (m) s.onOpen?.(last);
            continue;
          }
          const message = JSON.parse(ev.data);
          last = ev.id ?? last;
          yield { id: ev.id ?? '', type: message.type, topic: message.topic, seq: message.seq, market: message.market, message };
          if (s.signal?.aborted) return;
        }
      } catch (e) {
        if (e instanceof ApiError) throw e;
        if (s.signal?.aborted) return;
        reason = (e as Error).message;
      }
      if (s.signal?.aborted || this.closed) return;
      this.http.next();
      s.onReconnect?.(reason, last);
      await sleep(delay);
      delay = Math.min(2000, delay * 2);
    }
  }
}

// Public market data (issue 18): a token's book as aggregated levels, its best prices, midpoint,
// spread and tick, from the book actor (single writer: one ReadBook ask per market); its price
// history from the ledger's trades. Every price and size is an exact decimal string of integer
// micro-units: no floating point touches a price.
import type { MarketTokens } from './catalog.ts';
import { createHash } from 'node:crypto';
import { AskTimeout, channel, type Answer, type Asker } from '../runtime/asker.ts';
import type { BookProtocol } from '../../topics/clob-commands.ts';
import { invalid, notFound, unavailable } from '../errors.ts';
import { decimalToMicro } from '../../topics/units.ts';
import { decimal } from './service.ts';
import { marketTrades, type PublicTrade } from './market-trades.ts';

import type { Db } from '../db.ts';

/** What the catalog says of a market, for its two tokens. */
type MarketRow = MarketTokens;

/** The book actor's ReadBook reply (topics/clob-commands.ts, BookView): levels as [price micro, size micro] per outcome view. */
type BookReply = Answer<BookProtocol, { type: 'ReadBook'; mintMerge: boolean }>;

export interface PriceLevel {
  price: string;
  size: string;
}

/** GET /v1/book's answer (the Polymarket CLOB's OrderBookSummary, plus `seq`). */
export interface BookSummary {
  market: string;
  asset_id: string;
  /** ms since the epoch, as text, when the node answered */
  timestamp: string;
  /** sha256 hex of the canonical book (levels, tick, minimum size): equal books, equal hashes */
  hash: string;
  bids: PriceLevel[];
  asks: PriceLevel[];
  tick_size: string;
  min_order_size: string;
  neg_risk: false;
  last_trade_price: string | null;
  /** The market's book sequence: grows by one with every change of its resting book (both tokens). */
  seq: number;
}

export type Side = 'BUY' | 'SELL';
export type Interval = '1m' | '1h' | '6h' | '1d' | '1w' | 'max';

export const INTERVAL_SECONDS: Record<Exclude<Interval, 'max'>, number> = {
  '1m': 60,
  '1h': 3_600,
  '6h': 21_600,
  '1d': 86_400,
  '1w': 604_800,
};
/** Most points one history answer may hold (a window of more buckets is a 400). */
export const MAX_HISTORY_POINTS = 1_000;
/** The bucket sizes (minutes) chosen when `fidelity` is not given: the finest that fits the window. */
const FIDELITIES = [1, 5, 15, 60, 360, 1_440, 10_080, 43_200];

export interface HistoryQuery {
  market: string;
  interval?: Interval;
  fidelity?: number;
  startTs?: number;
  endTs?: number;
}

/** A signed micro-unit amount as a decimal string ("-0.02"). */
const signed = (v: bigint) => (v < 0n ? `-${decimal(-v)}` : decimal(v));

/** (a + b) / 2 of micro-units, exactly: up to 7 decimal places. */
function half(sum: bigint): string {
  const tenths = sum * 5n; // units of 1e-7
  const i = tenths / 10_000_000n;
  const f = (tenths % 10_000_000n).toString().padStart(7, '0').replace(/0+$/, '');
  return f ? `${i}.${f}` : `${i}`;
}

const levels = (l: [number, string][]) => l.map(([p, n]) => ({ price: decimal(p), size: decimal(n) }));

export class MarketData {
  constructor(private d: { asker: Asker; db: () => Db; bookTopic: string; mintMerge: boolean; now?: () => number }) {}

  private async markets(tokens: string[]): Promise<Map<string, MarketRow>> {
    const rows: MarketRow[] = tokens.length
      ? await this.d
          .db()
          .execute(
            'select condition_id, yes_token_id, no_token_id, tick_size::text, min_size::text from markets where yes_token_id in (?) or no_token_id in (?)',
            [tokens, tokens],
          )
      : [];
    const out = new Map<string, MarketRow>();
    for (const r of rows) {
      out.set(r.yes_token_id, r);
      out.set(r.no_token_id, r);
    }
    const unknown = tokens.filter((t) => !out.has(t));
    if (unknown.length)
      throw notFound(
        `no market trades token ${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ` (and ${unknown.length - 5} more)` : ''}`,
      );
    return out;
  }

  private async readBook(conditionId: string): Promise<BookReply> {
    try {
      return await this.d.asker.askTo(channel<BookProtocol>(this.d.bookTopic), conditionId, {
        type: 'ReadBook',
        mintMerge: this.d.mintMerge,
      });
    } catch (e) {
      if (e instanceof AskTimeout) throw unavailable('unavailable', 'the book did not answer in time; retry');
      throw e;
    }
  }

  /** The books of these tokens (deduplicated, in the order given): one ask per market. */
  async books(tokens: string[]): Promise<BookSummary[]> {
    const unique = [...new Set(tokens)];
    const markets = await this.markets(unique);
    const replies = new Map<string, Promise<BookReply>>();
    for (const t of unique) {
      const id = markets.get(t)!.condition_id;
      if (!replies.has(id)) replies.set(id, this.readBook(id));
    }
    const now = String((this.d.now ?? Date.now)());
    return Promise.all(unique.map(async (t) => summary(markets.get(t)!, t, await replies.get(markets.get(t)!.condition_id)!, now)));
  }

  async book(token: string): Promise<BookSummary> {
    return (await this.books([token]))[0];
  }

  /**
   * Best prices per token and side. `BUY` is the best bid (the highest price a resting buyer pays,
   * what a seller gets now), `SELL` the best ask (what a buyer pays now), as the Polymarket CLOB
   * API reference defines /price. Null: nothing rests on that side.
   */
  async prices(wanted: { token_id: string; side: Side }[]): Promise<Record<string, Partial<Record<Side, string | null>>>> {
    const books = byToken(await this.books(wanted.map((w) => w.token_id)));
    const out: Record<string, Partial<Record<Side, string | null>>> = Object.create(null);
    for (const w of wanted) {
      const b = books.get(w.token_id)!;
      const top = w.side === 'BUY' ? b.bids[0] : b.asks[0];
      (out[w.token_id] ??= {})[w.side] = top ? top.price : null;
    }
    return out;
  }

  /** (best bid + best ask) / 2 per token, exact; null when a side is empty. */
  async midpoints(tokens: string[]): Promise<Record<string, string | null>> {
    return this.touch(tokens, (bid, ask) => half(bid + ask));
  }

  /** best ask − best bid per token (negative when the book rests crossed); null when a side is empty. */
  async spreads(tokens: string[]): Promise<Record<string, string | null>> {
    return this.touch(tokens, (bid, ask) => signed(ask - bid));
  }

  private async touch(tokens: string[], f: (bid: bigint, ask: bigint) => string): Promise<Record<string, string | null>> {
    const books = await this.books(tokens);
    const out: Record<string, string | null> = Object.create(null);
    for (const b of books) {
      out[b.asset_id] = b.bids[0] && b.asks[0] ? f(micro(b.bids[0].price), micro(b.asks[0].price)) : null;
    }
    return out;
  }

  /** The market's most recent trades, public fields only (src/clob/market-trades.ts). */
  async trades(market: string, limit: number): Promise<PublicTrade[]> {
    return marketTrades(this.d.db(), market, limit);
  }

  async tickSize(token: string): Promise<{ minimum_tick_size: string }> {
    const m = (await this.markets([token])).get(token)!;
    return { minimum_tick_size: decimal(m.tick_size) };
  }

  /**
   * The last trade price of each bucket of `fidelity` minutes (buckets aligned on the epoch, `t` its
   * start in unix seconds) in the token's terms: a trade of the other token at q counts at 1 − q.
   * Buckets without a trade have no point. The window: [startTs, endTs] (whole seconds), or the `interval` before
   * endTs (default now), `max` from the market's first trade.
   */
  async history(q: HistoryQuery): Promise<{ history: { t: number; p: string }[] }> {
    const m = (await this.markets([q.market])).get(q.market)!;
    const nowS = Math.floor((this.d.now ?? Date.now)() / 1000);
    const end = q.endTs ?? nowS;
    let start: number;
    if (q.startTs !== undefined) start = q.startTs;
    else if (q.interval === 'max') {
      const [r] = await this.d
        .db()
        .execute('select floor(extract(epoch from min(match_time)))::bigint::text as first from trades where market = ?', [m.condition_id]);
      if (r?.first == null) return { history: [] };
      start = Math.min(Number(r.first), end);
    } else start = end - INTERVAL_SECONDS[q.interval!];
    if (end < start) throw invalid('invalid_request', 'endTs must not be before startTs');
    const buckets = (fid: number) => Math.floor(end / (fid * 60)) - Math.floor(start / (fid * 60)) + 1;
    const fidelity = q.fidelity ?? FIDELITIES.find((f) => buckets(f) <= MAX_HISTORY_POINTS) ?? FIDELITIES[FIDELITIES.length - 1];
    if (buckets(fidelity) > MAX_HISTORY_POINTS) {
      throw invalid(
        'invalid_request',
        `the window holds ${buckets(fidelity)} buckets of ${fidelity} minutes: at most ${MAX_HISTORY_POINTS} points per answer (raise fidelity or narrow the window)`,
      );
    }
    const width = fidelity * 60;
    // The market's trades in the window (index trades_market_time_idx), the last of each bucket.
    const rows = await this.d.db().execute(
      `select distinct on (b) b::text as t, p::text as p from (
         select (floor(extract(epoch from match_time) / ?) * ?)::bigint as b, match_time, id,
                case when asset_id = ? then price else 1000000 - price end as p
         from trades where market = ? and match_time >= to_timestamp(?) and match_time < to_timestamp(?)
       ) x order by b, match_time desc, id desc limit ?`,
      [width, width, q.market, m.condition_id, start, end + 1, MAX_HISTORY_POINTS],
    );
    return { history: rows.map((r: any) => ({ t: Number(r.t), p: decimal(r.p) })) };
  }
}

function byToken(books: BookSummary[]): Map<string, BookSummary> {
  return new Map(books.map((b) => [b.asset_id, b]));
}

/** A decimal string of at most 6 places as integer micro-units. */
function micro(v: string): bigint {
  const n = decimalToMicro(v, { negative: true });
  if (n === null) throw new Error(`not a decimal of units: ${v}`);
  return n;
}

/** The canonical text a book's hash is taken of: one line per field, levels as price:size. */
export function canonicalBook(b: Pick<BookSummary, 'market' | 'asset_id' | 'bids' | 'asks' | 'tick_size' | 'min_order_size'>): string {
  const side = (l: PriceLevel[]) => l.map((x) => `${x.price}:${x.size}`).join(',');
  return [b.market, b.asset_id, `bids=${side(b.bids)}`, `asks=${side(b.asks)}`, `tick=${b.tick_size}`, `min=${b.min_order_size}`].join(
    '\n',
  );
}

function summary(m: MarketRow, token: string, r: BookReply, now: string): BookSummary {
  const view = token === m.yes_token_id ? r.yes : r.no;
  const body = {
    market: m.condition_id,
    asset_id: token,
    bids: levels(view?.bids ?? []),
    asks: levels(view?.asks ?? []),
    tick_size: decimal(m.tick_size),
    min_order_size: decimal(m.min_size),
  };
  const last = r.last ? (r.last.asset_id === token ? r.last.price : 1_000_000 - r.last.price) : null;
  return {
    market: body.market,
    asset_id: token,
    timestamp: now,
    hash: createHash('sha256').update(canonicalBook(body)).digest('hex'),
    bids: body.bids,
    asks: body.asks,
    tick_size: body.tick_size,
    min_order_size: body.min_order_size,
    neg_risk: false,
    last_trade_price: last === null ? null : decimal(last),
    seq: r.seq,
  };
}

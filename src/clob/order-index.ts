// What the ledger knows of orders, read in batches on the order path: whether it already holds an
// order (a signed order is placed once, ever) with the market that trades the order's token, and
// where the orders a cancel names are. Read one by one, every order and every cancel was a statement
// of its own: on PGlite about 0.3 ms of the node's one thread each (the largest single cost of the
// embedded order path), on PostgreSQL a round trip each. The reads asked in one event-loop turn share
// one statement instead (DataLoader, scheduled on setImmediate). Whether an order was posted is
// never cached; the market a token trades in is, and forgotten at once when it changes: when this
// node edits it, and, while the markets are watched (`watched`: PostgreSQL's notifications of
// `clob_markets` are being received, or the node is the database's only writer), when any node or
// session does (src/clob/market-watch.ts). Unwatched, it is read again after MARKET_TTL_MS. The
// book checks status, tick and size again itself, so a market closed elsewhere a moment ago is still
// refused, by its book. With the market in memory, whether the
// order was posted is not read at all unless the token's book lately asked for it: a book that
// remembers every order it was given tells a duplicate itself (actors/market-book/place.ts,
// `ledgerFirst`); one that does not answers CHECK_LEDGER, and the ledger is read then, and first
// for that token's orders for READ_FIRST_MS.
import DataLoader from 'dataloader';
import { CONFIG_COLUMNS, toConfig, type MarketConfig } from './catalog.ts';

import type { Db } from '../db.ts';

/** Named prepared statements (src/store/reader.ts). */
interface Reader {
  query<R = any>(name: string, sql: string, params: unknown[]): Promise<R[]>;
}

/** An order's row as a cancel needs it: where it trades, whose it is, how it stands. */
export interface OrderRow {
  id: string;
  market: string;
  owner_lc: string;
  status: string;
}

/** How long the market a token trades in is taken from memory before it is read again (markets unwatched). */
export const MARKET_TTL_MS = 1_000;
/** The same while the markets are watched: a belt, for a change no notification told (none is known). */
export const WATCHED_MARKET_TTL_MS = 60_000;
/** After a book asked for a ledger read (CHECK_LEDGER), how long its token's orders are read first. */
export const READ_FIRST_MS = 60_000;
/** Most orders placed through this node remembered with their market (the oldest go first). */
const MAX_PLACED = 100_000;
/** Most tokens remembered (a catalog bigger than this is read more often, not wrongly). */
const MAX_TOKENS = 100_000;

/** Most reads in one statement; a bigger turn is split (DataLoader's maxBatchSize). */
const MAX_BATCH = 500;

// Whether each order was posted (by the primary key: open_orders_known), with its token's market.
const SEEN_AND_MARKET = `with known as (select id from open_orders_known($2::jsonb))
select (k.i)::int as i, (k.v->>0) in (select id from known) as seen, m.*
  from jsonb_array_elements($1::jsonb) with ordinality as k(v, i)
  left join lateral (select ${CONFIG_COLUMNS} from markets where yes_token_id = k.v->>1 or no_token_id = k.v->>1 limit 1) as m on true`;

// By the primary key, whatever the table's statistics say (open_orders_known, Migration20261202100000):
// as `id in (select …)` the planner hashed the ids and scanned the whole table (1.3 ms per read on
// PGlite at a few thousand orders, growing with every order ever placed).
const ROWS = `select id, market, owner_lc, status from open_orders_known($1::jsonb)`;
// One order (a lone trader's every order and cancel): by the key itself, no JSON to parse, and no
// function to enter (PGlite, prepared: 79–108 µs against 151–188).
const ROW = `select id, market, owner_lc, status from open_orders where id = $1`;

/**
 * A loader that batches the keys asked in one event-loop turn (not only one promise tick), and
 * while its read is out, every key asked meanwhile (natural batching): one read in flight at a
 * time, the next one carrying all that waited. Idle, a read goes out on the next turn as before.
 */
function turnLoader<K, V>(load: (keys: readonly K[]) => Promise<V[]>): DataLoader<K, V> {
  let busy = false;
  /** Batches waiting for the read out (more than one only past MAX_BATCH keys): dispatched one by one. */
  const waiting: (() => void)[] = [];
  const timed = async (keys: readonly K[]) => {
    busy = true;
    try {
      return await load(keys);
    } finally {
      busy = false;
      const run = waiting.shift();
      if (run) setImmediate(run);
    }
  };
  return new DataLoader(timed, {
    cache: false,
    maxBatchSize: MAX_BATCH,
    // DataLoader keeps adding keys to a batch until this calls it back: while a read is out, it waits.
    batchScheduleFn: (run) => {
      if (busy) waiting.push(run);
      else setImmediate(run);
    },
  });
}

export class OrderIndex {
  private readonly seen: DataLoader<{ orderId: string; tokenId: string }, { seen: boolean; market: MarketConfig | null }>;
  private readonly rows: DataLoader<string, OrderRow | null>;

  /** The market of each token lately read, and when. */
  private readonly markets = new Map<string, { market: MarketConfig; at: number }>();
  /** Markets forgotten so far: a read that a change overtook is not kept (its snapshot may predate the change). */
  private changes = 0;
  /** Tokens whose book lately asked for a ledger read: until when their orders are read first. */
  private readonly readFirst = new Map<string, number>();
  /** Orders placed through this node and the market each trades in (an order's market never changes). */
  private readonly placedHere = new Map<string, string>();

  /** `reader`: the hot reads' prepared statements; without one, plain queries. */
  constructor(
    private db: () => Db,
    private reader?: Reader,
    private marketTtlMs = MARKET_TTL_MS,
    /** Every change of a market reaches `forgetMarket` now (see the header). */
    private watched: () => boolean = () => false,
  ) {
    this.seen = turnLoader(async (keys) => {
      const rows = await this.query('clob_orders_seen', SEEN_AND_MARKET, [
        JSON.stringify(keys.map((k) => [k.orderId, k.tokenId])),
        JSON.stringify(keys.map((k) => k.orderId)),
      ]);
      const out = keys.map(() => ({ seen: false, market: null as MarketConfig | null }));
      for (const r of rows) out[Number(r.i) - 1] = { seen: !!r.seen, market: r.condition_id ? toConfig(r) : null };
      return out;
    });
    this.rows = turnLoader(async (ids) => {
      const rows =
        ids.length === 1
          ? await this.query<OrderRow>('clob_order_row', ROW, [ids[0]])
          : await this.query<OrderRow>('clob_order_rows', ROWS, [JSON.stringify(ids)]);
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.map((id) => byId.get(id) ?? null);
    });
  }

  /**
   * The market that trades `tokenId` (null: none) and whether the ledger already holds `orderId`;
   * `seen` undefined: not read (the market was in memory and its book tells duplicates itself: the
   * order goes with `ledgerChecked: false`).
   */
  async forOrder(tokenId: string, orderId: string): Promise<{ seen: boolean | undefined; market: MarketConfig | null }> {
    const known = this.markets.get(tokenId);
    const ttl = this.watched() ? Math.max(this.marketTtlMs, WATCHED_MARKET_TTL_MS) : this.marketTtlMs;
    if (known && Date.now() - known.at < ttl) {
      const until = this.readFirst.get(tokenId);
      if (until !== undefined && until <= Date.now()) this.readFirst.delete(tokenId);
      if (until === undefined || until <= Date.now()) return { seen: undefined, market: known.market };
      // Its book asked lately: whether the order was posted (the cancels' statement, shared).
      return { seen: await this.posted(orderId), market: known.market };
    }
    const before = this.changes;
    const r = await this.seen.load({ orderId, tokenId });
    if (r.market && this.changes === before) {
      if (this.markets.size >= MAX_TOKENS) this.markets.clear();
      this.markets.set(tokenId, { market: r.market, at: Date.now() });
    }
    return r;
  }

  /** Whether the ledger holds `orderId` (by its key; the reads of one turn share a statement). */
  async posted(orderId: string): Promise<boolean> {
    return (await this.rows.load(orderId)) !== null;
  }

  /** The book of `tokenId` asked for a ledger read (CHECK_LEDGER): its orders are read first for a while. */
  readLedgerFirst(tokenId: string): void {
    if (this.readFirst.size >= MAX_TOKENS) this.readFirst.clear();
    this.readFirst.set(tokenId, Date.now() + READ_FIRST_MS);
  }

  /** Forgets what is remembered of a market (it just changed). */
  forgetMarket(conditionId: string): void {
    this.changes++;
    const id = conditionId.toLowerCase();
    for (const [token, m] of this.markets) if (m.market.condition_id.toLowerCase() === id) this.markets.delete(token);
  }

  /** Forgets every market (changes may have gone untold: the notifications' connection was lost). */
  forgetAllMarkets(): void {
    this.changes++;
    this.markets.clear();
  }

  /** An order this node placed (answered as placed): a cancel of it is routed without a read. */
  placed(orderId: string, market: string): void {
    if (this.placedHere.size >= MAX_PLACED) this.placedHere.delete(this.placedHere.keys().next().value!);
    this.placedHere.set(orderId, market);
  }

  /**
   * The market of each order: those placed through this node from memory, the others from their
   * rows (`rows`: what was read; unknown ids are in neither).
   */
  async marketsOf(ids: string[]): Promise<{ markets: Map<string, string>; rows: Map<string, OrderRow> }> {
    const markets = new Map<string, string>();
    const unread: string[] = [];
    for (const id of ids) {
      const m = this.placedHere.get(id);
      if (m) markets.set(id, m);
      else unread.push(id);
    }
    const rows = unread.length ? await this.rowsOf(unread) : new Map<string, OrderRow>();
    for (const [id, r] of rows) markets.set(id, r.market);
    return { markets, rows };
  }

  /** The rows of these orders that the ledger holds, by id. */
  async rowsOf(ids: string[]): Promise<Map<string, OrderRow>> {
    const out = new Map<string, OrderRow>();
    for (const r of await this.rows.loadMany(ids)) {
      if (r instanceof Error) throw r;
      if (r) out.set(r.id, r);
    }
    return out;
  }

  private async query<R = any>(name: string, sql: string, params: string[]): Promise<R[]> {
    if (this.reader) return this.reader.query<R>(name, sql, params);
    // positional: each $n becomes ? with its value, in the order they appear
    const values: string[] = [];
    const text = sql.replace(/\$(\d+)/g, (_, n: string) => (values.push(params[Number(n) - 1]), '?'));
    return (await this.db().execute(text, values)) as R[];
  }
}

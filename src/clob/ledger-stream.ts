// The public ledger as a stream: rows of ledger_messages (gap-free seq per market and topic)
// published to the Kafka topics ledger.orders / ledger.trades by a relay, and read back for the
// Server-Sent Events of GET /v1/stream.
import type { Bus } from '../runtime/types.ts';
import type { Orm } from '../store/orm.ts';
import { toJson } from '../runtime/json.ts';
import { WakeLoop } from '../store/wake-loop.ts';

import { ledgerWire, type LedgerMessage } from '../../topics/ledger.ts';
import type { Db } from '../db.ts';

export interface LedgerRow {
  market: string;
  topic: 'orders' | 'trades';
  seq: string;
  type: string;
  owner_lc: string | null;
  payload: any;
  at: string;
}

/** The wire message of contracts/clob.md, Ledger stream: `{ v: 1, type, market, seq, at, ... }` (topics/ledger.ts). */
export function ledgerMessage(r: LedgerRow): LedgerMessage {
  const payload = typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload;
  return ledgerWire({ market: r.market, seq: r.seq, at: r.at, payload: { type: r.type, ...payload } });
}

/**
 * Publishes unpublished rows in (market, topic, seq) order. A market's rows are taken under an
 * advisory lock of that market, so two relays never interleave one market's messages. One drain
 * is one transaction: the markets with rows past their marks that this relay could lock, their
 * rows, and the marks moved past them (`ledger_take`: ledger rows are never updated), the sends,
 * then the commit.
 */
export class LedgerRelay {
  private loop: WakeLoop;

  constructor(
    private orm: Orm,
    private bus: Bus,
    private topicOf: (t: string) => string,
    private log: { error(o: object, m?: string): void },
    idleMs = 500,
    private limit = 5000,
    // A drain costs three statements and a produce whatever it carries: under load one every 100 ms
    // per node, not one per commit (a ledger message reaches its topic ~50 ms later on average).
    gapMs = 100,
  ) {
    // Again at once only when a drain was cut short (its row limit, or its number of markets);
    // markets poked while a drain ran wait for the loop's gap, and go together in the next one.
    this.loop = new WakeLoop(async () => (await this.drainOnce()) >= this.limit || this.dirty.size >= MARKETS_PER_DRAIN, {
      idleMs,
      gapMs,
      onError: (err) => this.log.error({ err }, 'ledger relay failed; retrying'),
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Markets this node's books committed ledger rows for since the last drain took them. */
  private dirty = new Set<string>();

  /**
   * Wakes the relay now (after a commit that wrote ledger rows): the next drain looks at these
   * markets only, instead of searching the table for every market with unpublished rows (which
   * the idle drains still do, for what other nodes left behind).
   */
  poke(markets: Iterable<string> = []): void {
    for (const m of markets) this.dirty.add(m);
    this.loop.poke();
  }

  /** When a drain last searched the whole table (under load, still at least every FULL_DRAIN_MS). */
  private lastFull = 0;

  async drainOnce(): Promise<number> {
    const full = !this.dirty.size || Date.now() - this.lastFull >= FULL_DRAIN_MS;
    const markets = full ? null : [...this.dirty].slice(0, MARKETS_PER_DRAIN);
    for (const m of markets ?? []) this.dirty.delete(m);
    if (full) this.lastFull = Date.now();
    const drained = await (this.orm.em.fork() as any)
      .transactional(async (em: any) => {
        // Taken and the marks moved in one call (Migration20261205100000), sent, then committed: a
        // failed send rolls the marks back.
        const taken: TakenRow[] = markets
          ? await em.execute('select * from ledger_take(array[?]::text[], ?)', [markets, this.limit])
          : await em.execute('select * from ledger_take(null, ?)', [this.limit]);
        if (!taken.length) return 0;
        const rows = taken.map(rowOf).sort(bySeq);
        // Both topics' sends issued together: one produce request on Kafka (KafkaBus.send), not two in series.
        const sends: Promise<void>[] = [];
        for (const topic of ['orders', 'trades']) {
          const recs = rows.filter((r) => r.topic === topic).map((r) => ({ key: r.market, value: toJson(ledgerMessage(r)) }));
          if (recs.length) sends.push(this.bus.send(this.topicOf(topic), recs));
        }
        await Promise.all(sends);
        return rows.length;
      })
      .catch((err: unknown) => {
        for (const m of markets ?? []) this.dirty.add(m); // tried again by the next drain
        throw err;
      });
    return drained as number;
  }

  /** Stops; resolves once a drain in progress ended. */
  stop(): Promise<void> {
    return this.loop.stop();
  }
}

/** A row as `ledger_take` returns it (its columns prefixed: they are a PL/pgSQL function's outputs). */
interface TakenRow {
  r_market: string;
  r_topic: 'orders' | 'trades';
  r_seq: string | number;
  r_type: string;
  r_owner_lc: string | null;
  r_payload: unknown;
  r_at: string;
}

const rowOf = (t: TakenRow): LedgerRow => ({
  market: t.r_market,
  topic: t.r_topic,
  seq: String(t.r_seq),
  type: t.r_type,
  owner_lc: t.r_owner_lc,
  payload: t.r_payload,
  at: t.r_at,
});

/** Each market's messages in seq order, per topic (an UPDATE returns its rows in no set order). */
const bySeq = (a: LedgerRow, b: LedgerRow) =>
  a.market < b.market ? -1 : a.market > b.market ? 1 : a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : Number(a.seq) - Number(b.seq);

/** Markets one drain takes (poked ones, or found with unpublished rows; the function takes at most 100 itself). */
const MARKETS_PER_DRAIN = 100;
/** A drain searches the whole table at least this often, also under a steady stream of pokes. */
const FULL_DRAIN_MS = 500;

/** Cursor of an SSE stream: the last seq seen of each topic (`o<seq>.t<seq>`, the SSE event id). */
export interface Cursor {
  orders: number;
  trades: number;
}

export function parseCursor(s: string | undefined): Cursor | null {
  if (!s) return null;
  const m = /^o(\d+)\.t(\d+)$/.exec(s.trim());
  return m ? { orders: Number(m[1]), trades: Number(m[2]) } : null;
}

export const cursorId = (c: Cursor) => `o${c.orders}.t${c.trades}`;

/** Messages after the cursor, each topic in seq order, merged by time; others' order messages lose their owner. */
export async function readAfter(
  db: Db,
  market: string,
  c: Cursor,
  viewer: string,
  limit = 500,
): Promise<{ rows: Record<string, unknown>[]; ids: string[]; cursor: Cursor }> {
  const fetch = (topic: string, after: number): Promise<LedgerRow[]> =>
    db.execute(
      `select market, topic, seq::text, type, owner_lc, payload, at from ledger_messages where market = ? and topic = ? and seq > ? order by ledger_messages.seq limit ?`, // the bigint, not the text alias
      [market, topic, after, limit],
    );
  const [orders, trades] = await Promise.all([fetch('orders', c.orders), fetch('trades', c.trades)]);
  const out: Record<string, unknown>[] = [];
  const ids: string[] = [];
  const cur = { ...c };
  const me = viewer.toLowerCase();
  let i = 0;
  let j = 0;
  while (i < orders.length || j < trades.length) {
    const takeOrder = j >= trades.length || (i < orders.length && new Date(orders[i].at).getTime() <= new Date(trades[j].at).getTime());
    const r = takeOrder ? orders[i++] : trades[j++];
    if (r.topic === 'orders') cur.orders = Number(r.seq);
    else cur.trades = Number(r.seq);
    const msg = ledgerMessage(r) as any;
    if (r.owner_lc && r.owner_lc !== me) {
      if (msg.order) {
        const { owner: _o, ...order } = msg.order;
        msg.order = order;
      }
      delete msg.owner;
    }
    out.push({ ...msg, topic: `ledger.${r.topic}` });
    ids.push(cursorId(cur));
  }
  return { rows: out, ids, cursor: cur };
}

/** Where a new stream starts: the current end of the market's ledger. */
export async function endCursor(db: Db, market: string): Promise<Cursor> {
  const rows = await db.execute('select topic, max(seq)::text as seq from ledger_messages where market = ? group by topic', [market]);
  const c: Cursor = { orders: 0, trades: 0 };
  for (const r of rows) c[r.topic as 'orders' | 'trades'] = Number(r.seq);
  return c;
}

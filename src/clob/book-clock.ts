// Time-driven book commands: GTD expiry, game start, release of delayed orders. Each node ticks only
// the markets whose partition it owns; the book decides what is due (the commands are idempotent).
import { partitionFor } from '../runtime/partitioner.ts';
import { channel, type Asker, type Command } from '../runtime/asker.ts';
import type { BookProtocol } from '../../topics/clob-commands.ts';
import type { Runtime } from '../runtime/runtime.ts';
import type { Bus } from '../runtime/types.ts';

import type { Db } from '../db.ts';

/** What is due, one row per (market, reason); `$1` is now in seconds (order expirations), `$2` in ms. */
const DUE = `select o.market, 'expire' as due, null::text as start_ms from open_orders o
   where o.status in ('LIVE', 'DELAYED') and o.expiration > 0 and o.expiration <= $1::bigint group by o.market
 union all
 select o.market, 'delayed', null from open_orders o where o.status = 'DELAYED' group by o.market
 union all
 select m.condition_id, 'started', (extract(epoch from m.start_time) * 1000)::bigint::text from markets m
   where m.start_time is not null and m.start_time <= to_timestamp($2::bigint / 1000.0)
     and exists (select 1 from open_orders o where o.market = m.condition_id and o.status = 'LIVE' and o.created_at < m.start_time)`;

export class BookClock {
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<unknown> | null = null;
  private stopped = false;
  /** Markets whose StartGame was sent, with the start time (ms, as text) it was sent for. */
  private readonly started = new Map<string, string>();

  constructor(
    private o: {
      db: () => Db;
      /** The hot reads' prepared statements (src/store/reader.ts); without one, plain queries. */
      reader?: { query<R = any>(name: string, sql: string, params: unknown[]): Promise<R[]> };
      asker: Asker;
      bus: Bus;
      runtime: Runtime;
      bookTopic: string;
      everyMs?: number;
      log: { warn(o: object, m?: string): void };
    },
  ) {}

  start(): void {
    const tick = async () => {
      this.timer = null;
      const run = this.tick(Date.now()).catch((err) => this.o.log.warn({ err }, 'book clock tick failed'));
      this.ticking = run;
      await run;
      this.ticking = null;
      if (!this.stopped) this.timer = setTimeout(tick, this.o.everyMs ?? 1000);
    };
    this.timer = setTimeout(tick, this.o.everyMs ?? 1000);
  }

  async tick(now: number): Promise<void> {
    const owned = new Set(
      this.o.runtime
        .assignment()
        .filter((a) => a.topic === this.o.bookTopic)
        .map((a) => a.partition),
    );
    if (!owned.size) return;
    const n = this.o.bus.partitionsOf(this.o.bookTopic);
    const rows = await this.due(now);
    const cmds: Command<BookProtocol['cmd']>[] = [];
    const started: [string, string][] = [];
    for (const r of rows) {
      if (!owned.has(partitionFor(r.market, n))) continue;
      if (r.expire) cmds.push({ key: r.market, cmd: { type: 'Expire', now } });
      // Once per market and start time: after it, only orders released from the start window
      // (which StartGame keeps) can have been created before the start, so asking again each tick
      // would change nothing. A new owner, or an edited start time, asks again (harmless).
      if (r.started && this.started.get(r.market) !== r.start_ms) {
        cmds.push({ key: r.market, cmd: { type: 'StartGame', now } });
        started.push([r.market, r.start_ms]);
      }
      if (r.delayed) cmds.push({ key: r.market, cmd: { type: 'ReleaseDelayed', now } });
    }
    if (cmds.length) await this.o.asker.tellTo(channel<BookProtocol>(this.o.bookTopic), cmds);
    for (const [market, startMs] of started) this.started.set(market, startMs);
    if (this.started.size > 100_000) this.started.clear();
  }

  /**
   * Each market with something due: GTD orders past their expiration, delayed orders, or orders
   * booked before a start that has passed. Read by three probes that look only at what is due (the
   * partial indexes of Migration20261204100000 hold GTD and delayed orders alone), not by a pass
   * over every live order: that took 8–19 ms of the embedded node's one thread every second at
   * ~2,000 live orders (a stall for whatever request arrived meanwhile), and grew with them.
   */
  private async due(now: number): Promise<{ market: string; expire: boolean; delayed: boolean; started: boolean; start_ms: string }[]> {
    const params = [String(Math.floor(now / 1000)), String(now)];
    const rows: { market: string; due: 'expire' | 'delayed' | 'started'; start_ms: string | null }[] = this.o.reader
      ? await this.o.reader.query('clob_book_clock_due', DUE, params)
      : await this.o.db().execute(DUE.replace(/\$\d/g, '?'), params);
    const byMarket = new Map<string, { market: string; expire: boolean; delayed: boolean; started: boolean; start_ms: string }>();
    for (const r of rows) {
      let m = byMarket.get(r.market);
      if (!m) byMarket.set(r.market, (m = { market: r.market, expire: false, delayed: false, started: false, start_ms: '' }));
      m[r.due] = true;
      if (r.due === 'started') m.start_ms = r.start_ms ?? '';
    }
    return [...byMarket.values()];
  }

  /** No further ticks; resolves once a tick in progress ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
  }
}

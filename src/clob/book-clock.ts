// Time-driven book commands: GTD expiry, game start, release of delayed orders. Each node ticks only
// the markets whose partition it owns; the book decides what is due (the commands are idempotent).
import { partitionFor } from '../runtime/partitioner.ts';
import { channel, type Asker, type Command } from '../runtime/asker.ts';
import type { BookProtocol } from '../../topics/clob-commands.ts';
import type { Runtime } from '../runtime/runtime.ts';
import type { Bus } from '../runtime/types.ts';

import type { Db } from '../db.ts';

export class BookClock {
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<unknown> | null = null;
  private stopped = false;
  /** Markets whose StartGame was sent, with the start time (ms, as text) it was sent for. */
  private readonly started = new Map<string, string>();

  constructor(
    private o: {
      db: () => Db;
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
    const rows = await this.o.db().execute(
      `select o.market,
         bool_or(o.expiration > 0 and o.expiration <= ?) as expire,
         bool_or(o.status = 'DELAYED') as delayed,
         bool_or(o.status = 'LIVE' and m.start_time is not null and m.start_time <= to_timestamp(? / 1000.0) and o.created_at < m.start_time) as started,
         (extract(epoch from max(m.start_time)) * 1000)::bigint::text as start_ms
       from open_orders o join markets m on m.condition_id = o.market
       where o.status in ('LIVE', 'DELAYED') group by o.market`,
      [Math.floor(now / 1000), now],
    );
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

  /** No further ticks; resolves once a tick in progress ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
  }
}

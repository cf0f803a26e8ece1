// Time-driven book commands: GTD expiry, game start, release of delayed orders. Each node ticks only
// the markets whose partition it owns; the book decides what is due (the commands are idempotent).
import { partitionFor } from '../runtime/partitioner.ts';
import type { Asker } from '../runtime/asker.ts';
import type { Runtime } from '../runtime/runtime.ts';
import type { Bus } from '../runtime/types.ts';

type Db = { execute(sql: string, params?: unknown[]): Promise<any[]> };

export class BookClock {
  private timer: NodeJS.Timeout | null = null;

  constructor(private o: { db: () => Db; asker: Asker; bus: Bus; runtime: Runtime; bookTopic: string; everyMs?: number; log: { warn(o: object, m?: string): void } }) {}

  start(): void {
    const tick = async () => {
      try { await this.tick(Date.now()); } catch (err) { this.o.log.warn({ err }, 'book clock tick failed'); }
      this.timer = setTimeout(tick, this.o.everyMs ?? 1000);
    };
    this.timer = setTimeout(tick, this.o.everyMs ?? 1000);
  }

  async tick(now: number): Promise<void> {
    const owned = new Set(this.o.runtime.assignment().filter((a) => a.topic === this.o.bookTopic).map((a) => a.partition));
    if (!owned.size) return;
    const n = this.o.bus.partitionsOf(this.o.bookTopic);
    const rows = await this.o.db().execute(
      `select o.market,
         bool_or(o.type = 'GTD' and o.status = 'LIVE' and o.expiration > 0 and o.expiration <= ?) as expire,
         bool_or(o.status = 'DELAYED') as delayed,
         bool_or(o.status = 'LIVE' and m.start_time is not null and m.start_time <= to_timestamp(? / 1000.0) and o.created_at < m.start_time and o.updated_at < m.start_time) as started
       from open_orders o join markets m on m.condition_id = o.market
       where o.status in ('LIVE', 'DELAYED') group by o.market`,
      [Math.floor(now / 1000), now],
    );
    const cmds: { topic: string; key: string; cmd: unknown }[] = [];
    for (const r of rows) {
      if (!owned.has(partitionFor(r.market, n))) continue;
      if (r.expire) cmds.push({ topic: this.o.bookTopic, key: r.market, cmd: { type: 'Expire', now } });
      if (r.started) cmds.push({ topic: this.o.bookTopic, key: r.market, cmd: { type: 'StartGame', now } });
      if (r.delayed) cmds.push({ topic: this.o.bookTopic, key: r.market, cmd: { type: 'ReleaseDelayed', now } });
    }
    if (cmds.length) await this.o.asker.tell(cmds);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}

// The idempotency inbox (`command_inbox`) answers a command that arrives again with its first
// answer, and tells a replay what was applied. Both needs end: an asker retries for seconds, and
// a replay starts at the partition's stored `replay_from`. Rows past the retention whose record
// lies before every group's replay point are deleted here, finished and rejected commands alike,
// so that no caller can grow the table without bound (issue 19: a rejected order's rows stayed).
// While the outbox holds a message (the relay sends at least once: one sent before a crash is sent
// again), no row younger than it is deleted, so a re-sent command still meets its first answer.
import { WakeLoop } from './wake-loop.ts';

import type { Db } from '../db.ts';

export interface InboxPrunerOptions {
  /** Rows younger than this stay (an asker's retries, a duplicate in flight). */
  retentionMs: number;
  /** How often a pass runs while there is nothing left to delete. */
  everyMs: number;
  /** Rows deleted per statement (a pass goes on at once while a statement filled its batch). */
  batch?: number;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void };
}

/** Deletes up to `batch` prunable rows; returns how many. */
export async function pruneInbox(db: Db, retentionMs: number, batch = 5_000): Promise<number> {
  const rows = await db.execute(
    `with gone as (
       select i.key from command_inbox i
       where i.created_at < now() - (? * interval '1 millisecond')
         -- an outbox message not yet sent may be a re-send of one already applied: its answer stays
         and i.created_at < coalesce((select min(created_at) from outbox), 'infinity')
         and (i.source_topic is null or i.source_offset < (
           select min(coalesce(c.replay_from, c.next_offset)) from consumer_offsets c
           where c.topic = i.source_topic and c.partition = i.source_partition))
       order by i.created_at limit ?),
     deleted as (delete from command_inbox where key in (select key from gone) returning 1)
     select count(*)::int as n from deleted`,
    [retentionMs, batch],
  );
  return Number(rows[0]?.n ?? 0);
}

export class InboxPruner {
  private loop: WakeLoop;
  private pruned = 0;

  constructor(
    db: () => Db,
    private o: InboxPrunerOptions,
  ) {
    const batch = o.batch ?? 5_000;
    this.loop = new WakeLoop(
      async () => {
        const n = await pruneInbox(db(), o.retentionMs, batch);
        this.pruned += n;
        if (n < batch && this.pruned) {
          o.log.info({ rows: this.pruned }, 'command inbox pruned');
          this.pruned = 0;
        }
        return n >= batch;
      },
      { idleMs: o.everyMs, gapMs: 0, onError: (err) => o.log.warn({ err }, 'command inbox prune failed; next pass later') },
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}

// The outbox: messages a batch commits for other actors or topics (in the same transaction as the
// batch's effects), and the relay that sends them after the commit. At least once: a relay that
// dies after sending and before deleting sends again, so every message carries an idempotency key
// (`id` of the envelope) or a sequence number its consumer checks.
import type { Bus, OutRecord, StoreTx } from '../runtime/types.ts';
import type { Orm } from './orm.ts';
import { toJson } from '../runtime/json.ts';
import { WakeLoop } from './wake-loop.ts';

export interface OutboxMessage {
  topic: string;
  key: string;
  value: string;
}

export async function enqueue(tx: StoreTx, messages: OutboxMessage[]): Promise<void> {
  if (!messages.length) return;
  await tx.execute(
    `insert into outbox (topic, key, value, created_at) select t.topic, t.key, t.value, now()
     from jsonb_to_recordset(?::jsonb) as t(topic text, key text, value text)`,
    [toJson(messages)],
  );
}

export class OutboxRelay {
  private running = false;
  private loop: WakeLoop;

  /**
   * Drains when poked after a commit that wrote to the outbox (at most every `gapMs`), and every
   * `idleMs` for rows another node committed and could not send.
   */
  constructor(
    private orm: Orm,
    private bus: Bus,
    private log: { error(o: object, m?: string): void },
    idleMs = 500,
    private batch = 500,
    gapMs = 50,
  ) {
    this.loop = new WakeLoop(async () => (await this.drainOnce()) >= this.batch, {
      idleMs,
      gapMs,
      onError: (err) => this.log.error({ err }, 'outbox relay failed; retrying'),
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Wakes the relay now (after a commit that wrote to the outbox). */
  poke(): void {
    this.loop.poke();
  }

  /** Sends one batch in id order; rows are deleted in the transaction that locked them, after sending. */
  async drainOnce(): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    try {
      return await (this.orm.em.fork() as any).transactional(async (em: any) => {
        const rows: { id: string; topic: string; key: string; value: string; headers: unknown }[] = await em.execute(
          // order by the bigint column, not the text alias (which would put id 10 before 9); a
          // forwarded command is its worker's to send until it is due (see Migration20261128100000)
          'select id::text, topic, key, value, headers from outbox where relay_after <= now() order by outbox.id limit ? for update skip locked',
          [this.batch],
        );
        if (!rows.length) return 0;
        const byTopic = new Map<string, OutRecord[]>();
        for (const r of rows) {
          const list = byTopic.get(r.topic) ?? [];
          const headers = typeof r.headers === 'string' ? JSON.parse(r.headers) : r.headers;
          list.push({ key: r.key, value: r.value, ...(headers ? { headers } : {}) });
          byTopic.set(r.topic, list);
        }
        for (const [topic, recs] of byTopic) await this.bus.send(topic, recs);
        await em.execute('delete from outbox where id in (?)', [rows.map((r) => r.id)]);
        return rows.length;
      });
    } finally {
      this.running = false;
    }
  }

  /** Stops; resolves once a drain in progress ended. */
  stop(): Promise<void> {
    return this.loop.stop();
  }
}

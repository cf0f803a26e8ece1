// The runtime's store on MikroORM: offsets (fenced), actor snapshots, the command inbox and dead
// letters, committed in the same transaction as a batch's effects.
import type { CommitArgs, DeadLetterRow, ReplayFacts, RuntimeStore, StoredPosition, StoredSnapshot } from '../runtime/store-port.ts';
import type { StoreTx } from '../runtime/types.ts';
import type { Orm } from './orm.ts';
import { toJson } from '../runtime/json.ts';
import { formatQuery } from './sql-format.ts';

type Em = { execute(sql: string, params?: unknown[], method?: 'all' | 'get' | 'run'): Promise<any> };

export function txOf(em: Em): StoreTx {
  return { execute: (sql, params) => em.execute(sql, params as unknown[]) };
}

export class SqlRuntimeStore implements RuntimeStore {
  /** PostgreSQL runs a multi-statement simple query atomically; PGlite's driver takes one statement per call. */
  private multiStatement: boolean;

  constructor(private orm: Orm) {
    this.multiStatement = orm.config.get('driver')?.name !== 'PgliteDriver' && !/pglite/i.test(String(orm.em.getPlatform().constructor.name));
  }

  private em() {
    return this.orm.em.fork() as any;
  }

  /** A statement outside any transaction, straight to the driver (no entity manager per call). */
  private run(sql: string, params: unknown[] = []): Promise<any> {
    return (this.orm.em.getDriver() as any).execute(sql, params);
  }

  async loadOffset(groupId: string, topic: string, partition: number): Promise<bigint | null> {
    const rows = await this.run('select next_offset::text as n from consumer_offsets where group_id = ? and topic = ? and partition = ?', [groupId, topic, partition]);
    return rows.length ? BigInt(rows[0].n) : null;
  }

  async loadPosition(groupId: string, topic: string, partition: number): Promise<StoredPosition | null> {
    const rows = await this.run('select next_offset::text as n, replay_from::text as r from consumer_offsets where group_id = ? and topic = ? and partition = ?', [groupId, topic, partition]);
    if (!rows.length) return null;
    const next = BigInt(rows[0].n);
    const from = rows[0].r === null || rows[0].r === undefined ? next : BigInt(rows[0].r);
    return { next, replayFrom: from < next ? from : next };
  }

  async resetOffset(groupId: string, topic: string, partition: number, next: bigint, owner: string): Promise<void> {
    await this.run(
      `insert into consumer_offsets (group_id, topic, partition, next_offset, replay_from, owner, updated_at) values (?, ?, ?, ?, null, ?, now())
       on conflict (group_id, topic, partition) do update set next_offset = excluded.next_offset, replay_from = null, owner = excluded.owner, updated_at = now()`,
      [groupId, topic, partition, next.toString(), owner],
    );
  }

  async loadSnapshots(kind: string, keys: string[]): Promise<Map<string, StoredSnapshot>> {
    const out = new Map<string, StoredSnapshot>();
    if (!keys.length) return out;
    // One primary-key lookup per key, whatever the planner's statistics say (`limit 1` keeps the
    // lateral lookup from being flattened into a join): with `key in (…)`, a table that grew since
    // its last ANALYZE was scanned whole for every batch.
    const rows = await this.run(
      `select s.key, s.state, s.next_offset::text as n from unnest(array[?]::text[]) as k(key)
       cross join lateral (select key, state, next_offset from actor_snapshots where kind = ? and key = k.key limit 1) s`, [keys, kind]);
    for (const r of rows) out.set(r.key, { state: typeof r.state === 'string' ? JSON.parse(r.state) : r.state, next: BigInt(r.n) });
    return out;
  }

  async replayFacts(topic: string, partition: number, ids: string[], offsets: bigint[]): Promise<ReplayFacts> {
    const appliedAt = new Map<string, bigint | null>();
    const poisoned = new Set<bigint>();
    if (ids.length) {
      const rows = await this.run('select key, source_topic as t, source_partition as p, source_offset::text as o from command_inbox where key in (?)', [ids]);
      for (const r of rows) appliedAt.set(r.key, r.t === topic && Number(r.p) === partition && r.o !== null ? BigInt(r.o) : null);
    }
    if (offsets.length) {
      const sources = offsets.map((o) => `${topic}/${partition}@${o}`);
      const rows = await this.run("select source from dead_letters where source in (?) and reason like 'decider failed:%'", [sources]);
      for (const r of rows) poisoned.add(BigInt(String(r.source).slice(String(r.source).lastIndexOf('@') + 1)));
    }
    return { appliedAt, poisoned };
  }

  async findInbox(keys: string[]): Promise<Map<string, unknown>> {
    const out = new Map<string, unknown>();
    if (!keys.length) return out;
    const rows = await this.run('select key, reply from command_inbox where key in (?)', [keys]);
    for (const r of rows) out.set(r.key, typeof r.reply === 'string' ? JSON.parse(r.reply) : r.reply);
    return out;
  }

  async deadLetter(row: DeadLetterRow): Promise<void> {
    await this.run('insert into dead_letters (source, reason, payload, created_at) values (?, ?, ?, now()) on conflict (source) do nothing', [row.source, row.reason, row.payload]);
  }

  /**
   * One round trip: every statement of the batch is formatted and sent as a single multi-statement
   * query, which PostgreSQL runs as one implicit transaction. The first statement fences: it divides
   * by zero unless this worker's expected offset is still the stored one.
   */
  async commit(a: CommitArgs): Promise<boolean> {
    const platform = this.orm.em.getPlatform();
    const statements: string[] = [];
    const push = (sql: string, params: unknown[] = []) => { statements.push(formatQuery(platform as any, sql, params)); };
    push(
      `with moved as (update consumer_offsets set next_offset = ?, replay_from = ?, owner = ?, updated_at = now()
         where group_id = ? and topic = ? and partition = ? and next_offset = ? returning 1)
       select 1 / (select count(*)::int from moved) as fenced_unless_one`,
      [a.next.toString(), a.replayFrom < a.next ? a.replayFrom.toString() : null, a.owner, a.groupId, a.topic, a.partition, a.expectedNext.toString()],
    );
    await a.effects({ execute: async (sql, params) => { push(sql, params ?? []); return []; } });
    if (a.snapshots.length) {
      push(
        `insert into actor_snapshots (kind, key, state, topic, partition, next_offset, updated_at)
         select t.kind, t.key, t.state, ?, ?, ?, now() from jsonb_to_recordset(?::jsonb) as t(kind text, key text, state jsonb)
         on conflict (kind, key) do update set state = excluded.state, topic = excluded.topic,
           partition = excluded.partition, next_offset = excluded.next_offset, updated_at = excluded.updated_at`,
        [a.topic, a.partition, a.next.toString(), toJson(a.snapshots)],
      );
    }
    if (a.inbox.length) {
      push(
        `insert into command_inbox (key, reply, source_topic, source_partition, source_offset, created_at)
         select t.key, t.reply, ?, ?, t.o, now() from jsonb_to_recordset(?::jsonb) as t(key text, reply jsonb, o bigint)
         on conflict (key) do nothing`,
        [a.topic, a.partition, toJson(a.inbox.map((r) => ({ key: r.key, reply: r.reply, o: r.offset.toString() })))],
      );
    }
    for (const d of a.deadLetters) {
      push('insert into dead_letters (source, reason, payload, created_at) values (?, ?, ?, now()) on conflict (source) do nothing', [d.source, d.reason, d.payload]);
    }
    try {
      if (this.multiStatement) {
        await this.run(statements.join(';\n'));
      } else {
        await this.em().transactional(async (em: Em) => { for (const sql of statements) await em.execute(sql); });
      }
      return true;
    } catch (e: any) {
      if (e?.code === '22012' || /division by zero/.test(String(e?.message))) return false; // fenced
      throw e;
    }
  }
}


// A toy actor kind whose projection writes each command's value into a real table with a small
// column (`v varchar(16)`, `seq int`): a command carrying a longer value, a NUL byte or a seq beyond
// int can never be committed. With a runtime on a real PostgreSQL store and either bus, for the
// poison-record tests of the runtime and of the ops CLI.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Runtime } from '../../src/runtime/runtime.ts';
import { Asker } from '../../src/runtime/asker.ts';
import { SqlRuntimeStore } from '../../src/store/runtime-store.ts';
import { openOrm, migrate } from '../../src/store/orm.ts';
import { createMetrics } from '../../src/metrics.ts';
import type { ActorKind, Bus } from '../../src/runtime/types.ts';
import type { CheckpointPolicy } from '../../src/runtime/partition-worker.ts';

export interface NoteState {
  n: number;
}
export interface NoteCmd {
  v: string;
  seq: number;
}

export const NOTES_TABLE = 'test_notes';

export function notesKind(topic: string): ActorKind<NoteState, NoteCmd, NoteCmd, { n: number }> {
  return {
    name: 'note',
    topic,
    decider: {
      initial: () => ({ n: 0 }),
      decide: (s, c) => ({ events: [{ v: c.v, seq: c.seq }], reply: { n: s.n + 1 } }),
      evolve: (s) => ({ n: s.n + 1 }),
    },
    parse: (c) => {
      const cmd = c as NoteCmd;
      if (typeof cmd?.v !== 'string' || typeof cmd?.seq !== 'number') throw new Error('v and seq expected');
      return cmd;
    },
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as NoteState,
    project: async (tx, applied) => {
      for (const a of applied)
        for (const e of a.events) await tx.execute(`insert into ${NOTES_TABLE} (key, seq, v) values (?, ?, ?)`, [a.key, e.seq, e.v]);
    },
  };
}

export interface LogLine {
  level: string;
  msg?: string;
  obj: any;
}

/** A runtime hosting the notes kind on `bus` and the database at `url` (its table created), with an asker, a captured log and real metrics. */
export async function notesRig(
  bus: Bus,
  url: string,
  prefix: string,
  o: { askTimeoutMs?: number; retryBackoff?: { firstMs: number; maxMs: number }; checkpoint?: CheckpointPolicy } = {},
) {
  const orm = await openOrm({ databaseUrl: url });
  await migrate(orm, url);
  await (orm.em.fork() as any).execute(
    `create table if not exists ${NOTES_TABLE} (key text not null, seq int not null, v varchar(16) not null)`,
  );
  const store = new SqlRuntimeStore(orm);
  const topic = `${prefix}notes`;
  const lines: LogLine[] = [];
  const at = (level: string) => (obj: object, msg?: string) => {
    lines.push({ level, msg, obj });
  };
  const log = { info: at('info'), warn: at('warn'), error: at('error') };
  const nodeId = `notes-${randomBytes(3).toString('hex')}`;
  const metrics = createMetrics(nodeId, false);
  const runtime = new Runtime({
    bus,
    store,
    nodeId,
    groupId: `${prefix}g`,
    kinds: [{ kind: notesKind(topic), owns: () => true }],
    partitions: { [topic]: 3 },
    log,
    metrics: metrics.runtime,
    retryBackoff: o.retryBackoff,
    checkpoint: o.checkpoint,
  });
  await runtime.start();
  const asker = new Asker(bus, `${prefix}${nodeId}`, o.askTimeoutMs ?? 15_000);
  await asker.start();
  return {
    topic,
    orm,
    store,
    asker,
    runtime,
    lines,
    metrics,
    async q(sql: string, params: unknown[] = []): Promise<any[]> {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return (await c.query(sql, params)).rows;
      } finally {
        await c.end();
      }
    },
    async close() {
      await asker.stop();
      await runtime.stop();
      await orm.close();
    },
  };
}

export const note = (topic: string, key: string, seq: number, v = `ok${seq}`, id?: string) => ({ topic, key, cmd: { v, seq }, id });

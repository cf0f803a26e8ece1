// Bulk records and kinds whose rows hold their state (issue 16), on both buses: a bulk ask travels
// as one record per partition and is answered by one reply per record, each command in order; a
// command of a bulk record that fails to parse is dead-lettered alone; a row-state kind keeps no
// snapshots, decides blind commands without an actor, and after a restart takes its state from
// its rows.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { Runtime } from '../../../src/runtime/runtime.ts';
import { Asker, AskFailed, channel } from '../../../src/runtime/asker.ts';
import { MemoryBus } from '../../../src/runtime/memory-bus.ts';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { partitionFor } from '../../../src/runtime/partitioner.ts';
import { SqlRuntimeStore } from '../../../src/store/runtime-store.ts';
import { openOrm, migrate } from '../../../src/store/orm.ts';
import type { ActorKind, Bus } from '../../../src/runtime/types.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';

type Cmd = { type: 'Open' } | { type: 'Add'; n: number };
type Event = { type: 'Opened' } | { type: 'Added'; n: number };
interface Tally {
  open: boolean;
  n: number;
}
type Reply = { ok: boolean; n: number };
interface TallyProtocol {
  cmd: Cmd;
  replies: { Open: Reply; Add: Reply };
}

const PARTITIONS = 3;

function tallyKind(topic: string, stats: { decided: number; loaded: string[] }): ActorKind<Tally, Cmd, Event, Reply> {
  return {
    name: 'tally',
    topic,
    decider: {
      initial: () => ({ open: false, n: 0 }),
      decide: (s, c) => {
        stats.decided++;
        if (c.type === 'Open')
          return s.open ? { events: [], reply: { ok: true, n: s.n } } : { events: [{ type: 'Opened' }], reply: { ok: true, n: 0 } };
        if (!s.open) return { events: [], reply: { ok: false, n: 0 }, final: false };
        return { events: [{ type: 'Added', n: c.n }], reply: { ok: true, n: s.n + c.n } };
      },
      evolve: (s, e) => (e.type === 'Opened' ? { open: true, n: 0 } : { ...s, n: s.n + e.n }),
    },
    parse: (c: any) => {
      if (c?.type === 'Open') return { type: 'Open' };
      if (c?.type === 'Add' && Number.isInteger(c.n)) return { type: 'Add', n: c.n };
      throw new Error(`not a tally command: ${JSON.stringify(c)}`);
    },
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as Tally,
    project: async (tx, applied) => {
      const opened = applied.flatMap((a) => a.events.filter((e) => e.type === 'Opened').map(() => ({ key: a.key })));
      if (opened.length)
        await tx.execute(
          `insert into tallies (key, n) select t.key, 0 from jsonb_to_recordset(?::jsonb) as t(key text) on conflict (key) do nothing`,
          [JSON.stringify(opened)],
        );
      for (const a of applied)
        for (const e of a.events) if (e.type === 'Added') await tx.execute('update tallies set n = n + ? where key = ?', [e.n, a.key]);
    },
    rows: {
      load: async (read, keys) => {
        stats.loaded.push(...keys);
        const rows = await read.execute('select key, n from tallies where key in (?)', [keys]);
        return new Map(rows.map((r: any) => [r.key, { open: true, n: Number(r.n) }]));
      },
      blind: (c) => c.type === 'Open',
    },
  };
}

async function rig(bus: Bus, url: string, prefix: string) {
  const orm = await openOrm({ databaseUrl: url });
  await migrate(orm, url);
  await (orm.em.fork() as any).execute('create table if not exists tallies (key text primary key, n int not null)');
  const stats = { decided: 0, loaded: [] as string[] };
  const topic = `${prefix}tallies`;
  const nodeId = `bulk-${randomBytes(3).toString('hex')}`;
  const runtime = new Runtime({
    bus,
    store: new SqlRuntimeStore(orm),
    nodeId,
    groupId: `${prefix}g`,
    kinds: [{ kind: tallyKind(topic, stats), owns: () => true }],
    partitions: { [topic]: PARTITIONS },
    log: pino({ level: 'silent' }),
  });
  await runtime.start();
  const asker = new Asker(bus, `${prefix}${nodeId}`, 20_000);
  await asker.start();
  const sql = (q: string, p: unknown[] = []) => (orm.em.fork() as any).execute(q, p) as Promise<any[]>;
  return {
    topic,
    ch: channel<TallyProtocol>(topic),
    stats,
    asker,
    sql,
    async close() {
      await asker.stop();
      await runtime.stop();
      await orm.close();
    },
  };
}

const buses: [string, () => Bus][] = [
  ['in-process', () => new MemoryBus(PARTITIONS)],
  ['kafka', () => new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'bulk-test' })],
];

for (const [name, makeBus] of buses) {
  test(`${name}: a bulk ask is one record and one reply per partition; a row-state kind keeps no snapshots and reloads from its rows`, async (t) => {
    const db = await freshDatabase();
    const prefix = `b${randomBytes(3).toString('hex')}.`;
    let bus = makeBus();
    let r = await rig(bus, db.url, prefix);
    t.teardown(async () => {
      await r.close().catch(() => undefined);
      await bus.close();
      await db.drop();
    });
    const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
    const before = (await bus.offsets!(r.topic)).reduce((s, o) => s + Number(o.high), 0);
    // Open every key, then add to each twice, in one bulk ask: per key, in order.
    const commands = [
      ...keys.map((key) => ({ key, cmd: { type: 'Open' } as Cmd })),
      ...keys.map((key, i) => ({ key, cmd: { type: 'Add', n: i } as Cmd })),
      ...keys.map((key) => ({ key, cmd: { type: 'Add', n: 100 } as Cmd })),
    ];
    const out = await r.asker.askBulkSettledTo(r.ch, commands);
    t.true(
      out.every((o) => o.status === 'fulfilled'),
      JSON.stringify(out.filter((o) => o.status === 'rejected')),
    );
    const values = out.map((o) => (o as PromiseFulfilledResult<Reply>).value);
    t.deepEqual(
      values.slice(60).map((v) => v.n),
      keys.map((_, i) => i + 100),
    );
    const records = (await bus.offsets!(r.topic)).reduce((s, o) => s + Number(o.high), 0) - before;
    const touched = new Set(keys.map((k) => partitionFor(k, PARTITIONS))).size;
    t.is(records, touched, 'one record per partition, not one per command');
    t.is((await r.sql("select count(*)::int as n from actor_snapshots where kind = 'tally'"))[0].n, 0, 'no snapshots');
    t.deepEqual(
      (await r.sql('select key, n from tallies order by n')).map((x) => x.n),
      keys.map((_, i) => i + 100),
    );

    // A bulk command that does not parse is refused alone (kept as a plain record of its own); the others apply.
    const mixed = await r.asker.askBulkSettledTo(r.ch, [
      { key: 'k1', cmd: { type: 'Add', n: 1 } },
      { key: 'k1', cmd: { type: 'Nope' } as unknown as Cmd },
      { key: 'k1', cmd: { type: 'Add', n: 1 } },
    ]);
    t.deepEqual(
      mixed.map((m) => m.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    t.true((mixed[1] as PromiseRejectedResult).reason instanceof AskFailed);
    t.is((mixed[2] as PromiseFulfilledResult<Reply>).value.n, 103);
    const dead = await r.sql('select source, payload, record_key from dead_letters');
    t.is(dead.length, 1);
    t.regex(dead[0].source, /@\d+\.1$/, 'the command within its record');
    t.is(dead[0].record_key, 'k1');
    t.like(JSON.parse(dead[0].payload), { v: 1, cmd: { type: 'Nope' } });

    // Restart: blind opens of existing keys change nothing; adds load the state from the rows.
    await r.close();
    if (name === 'in-process') {
      await bus.close();
      bus = makeBus();
    }
    r = await rig(bus, db.url, prefix);
    const again = await r.asker.askBulkSettledTo(r.ch, [
      { key: 'k2', cmd: { type: 'Open' } },
      { key: 'k3', cmd: { type: 'Add', n: 5 } },
      { key: 'new', cmd: { type: 'Open' } },
    ]);
    t.deepEqual(
      again.map((a) => (a as PromiseFulfilledResult<Reply>).value),
      [
        { ok: true, n: 0 },
        { ok: true, n: 108 },
        { ok: true, n: 0 },
      ],
    );
    t.deepEqual(r.stats.loaded, ['k3'], 'only the key whose command needs its state is loaded; blind opens need none');
    t.deepEqual(
      (await r.sql("select key, n from tallies where key in ('k2', 'k3', 'new') order by key")).map((x) => [x.key, x.n]),
      [
        ['k2', 102],
        ['k3', 108],
        ['new', 0],
      ],
    );
  });
}

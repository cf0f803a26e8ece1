// The runtime alone with a toy decider, on both buses: per-key order, asks answered after commit,
// idempotency keys answered once, snapshots + offsets surviving a restart, fencing.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import pg from 'pg';
import { Runtime, type RuntimeOptions } from '../../../src/runtime/runtime.ts';
import { AskFailed, Asker, AskTimeout } from '../../../src/runtime/asker.ts';
import { MemoryBus } from '../../../src/runtime/memory-bus.ts';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { partitionFor } from '../../../src/runtime/partitioner.ts';
import { SqlRuntimeStore } from '../../../src/store/runtime-store.ts';
import { InboxSeen } from '../../../src/runtime/store-port.ts';
import { openOrm, migrate } from '../../../src/store/orm.ts';
import type { ActorKind, Bus } from '../../../src/runtime/types.ts';
import type { CheckpointPolicy } from '../../../src/runtime/partition-worker.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { partitionMove, storeDb, xminOf } from '../../helpers/store-db.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';

interface Counter {
  n: number;
  seen: number[];
}
type Cmd = { add: number; seq: number };

function counterKind(topic: string, node: string): ActorKind<Counter, Cmd, { add: number; seq: number }, { n: number }> {
  return {
    name: 'counter',
    topic,
    decider: {
      initial: () => ({ n: 0, seen: [] }),
      decide: (s, c) => ({ events: [{ add: c.add, seq: c.seq }], reply: { n: s.n + c.add } }),
      // Mutates in place and throws half-way for a negative amount: a buggy decider.
      evolve: (s, e) => {
        s.n += e.add;
        if (e.add < 0) throw new Error('negative');
        s.seen.push(e.seq);
        return s;
      },
    },
    parse: (c) => c as Cmd,
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as Counter,
    // Effects are rows written in the batch's transaction: what a test sees of them was committed.
    project: async (tx, applied) => {
      await tx.execute(
        `insert into counter_effects (node, key, n) select ?, t.key, t.n from jsonb_to_recordset(?::jsonb) as t(key text, n int)`,
        [node, JSON.stringify(applied.map((a) => ({ key: a.key, n: a.state.n })))],
      );
    },
  };
}

interface RigExtras {
  log?: RuntimeOptions['log'];
  metrics?: RuntimeOptions['metrics'];
}

async function rig(
  bus: Bus,
  db: { url?: string },
  topicPrefix: string,
  maxLiveActors?: number,
  checkpoint?: CheckpointPolicy,
  extras: RigExtras = {},
) {
  const orm = await openOrm(db.url ? { databaseUrl: db.url } : { dataDir: 'memory://' });
  await migrate(orm, db.url);
  const store = new SqlRuntimeStore(orm);
  await orm.em.fork().execute('create table if not exists counter_effects (id serial primary key, node text, key text, n int)');
  const topic = `${topicPrefix}counters`;
  const nodeId = `rt-${randomBytes(3).toString('hex')}`;
  const kind = counterKind(topic, nodeId);
  /** The effects this rig's runtime committed, in commit order. */
  const effects = async (): Promise<{ key: string; n: number }[]> =>
    (await orm.em.fork().execute('select key, n from counter_effects where node = ? order by id', [nodeId])).map((r: any) => ({
      key: r.key,
      n: Number(r.n),
    }));
  const runtime = new Runtime({
    bus,
    store,
    nodeId,
    groupId: `${topicPrefix}g`,
    kinds: [{ kind, owns: () => true }],
    partitions: { [topic]: 3 },
    log: extras.log ?? pino({ level: 'silent' }),
    metrics: extras.metrics,
    maxLiveActors,
    checkpoint,
  });
  await runtime.start();
  // A minute: this file's tests run at once in one process, and a dozen PGlite instances migrating
  // on its one event loop (beside another test file on a 2-core runner) held an in-process ask past
  // 20 s in CI. An ask that is never answered still fails the test, a minute later.
  const asker = new Asker(bus, `${topicPrefix}${nodeId}`, 60_000);
  await asker.start();
  return {
    topic,
    effects,
    orm,
    store,
    asker,
    runtime,
    async close(opts?: { flush?: boolean }) {
      await asker.stop();
      await runtime.stop(opts);
      await orm.close();
    },
  };
}

const buses: [string, () => Bus][] = [
  ['in-process', () => new MemoryBus(3)],
  ['kafka', () => new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'runtime-test' })],
];

test('one partitioner: murmur2 as Kafka clients use it, stable per key', (t) => {
  t.is(partitionFor('vault', 12), partitionFor('vault', 12));
  const spread = new Set(Array.from({ length: 200 }, (_, i) => partitionFor(`k${i}`, 12)));
  t.is(spread.size, 12);
  t.is(partitionFor('anything', 1), 0);
});

for (const [name, makeBus] of buses) {
  test(`${name}: per-key order, answers after commit, a repeated idempotency key answered once`, async (t) => {
    const db = await freshDatabase();
    const bus = makeBus();
    const r = await rig(bus, { url: db.url }, `t${randomBytes(3).toString('hex')}.`);
    t.teardown(async () => {
      await r.close();
      await bus.close();
      await db.drop();
    });
    const replies = await r.asker.askMany(
      Array.from({ length: 30 }, (_, i) => ({ topic: r.topic, key: `k${i % 3}`, cmd: { add: 1, seq: i } })),
    );
    // each key's answers count up 1..10 in the order sent
    for (const k of [0, 1, 2])
      t.deepEqual(
        replies.filter((_, i) => i % 3 === k).map((x: any) => x.n),
        Array.from({ length: 10 }, (_, i) => i + 1),
      );
    const first = await r.asker.ask({ topic: r.topic, key: 'k0', cmd: { add: 5, seq: 100 }, id: 'once' });
    const again = await r.asker.ask({ topic: r.topic, key: 'k0', cmd: { add: 5, seq: 100 }, id: 'once' });
    t.deepEqual(first, { n: 15 });
    t.deepEqual(again, { n: 15 }, 'the first answer, not a second effect');
    const after = await r.asker.ask({ topic: r.topic, key: 'k0', cmd: { add: 0, seq: 101 } });
    t.deepEqual(after, { n: 15 });
    const snap = await r.store.loadSnapshots('counter', ['k0']);
    t.is((snap.get('k0')?.state as Counter).n, 15);
  });
}

for (const [name, makeBus] of buses) {
  test(`${name}: an ask's command reaches its owner as JSON carries it, in a copy of its own`, async (t) => {
    const db = await freshDatabase();
    const bus = makeBus();
    const orm = await openOrm({ databaseUrl: db.url });
    await migrate(orm, db.url);
    const prefix = `t${randomBytes(3).toString('hex')}.`;
    const topic = `${prefix}probe`;
    const got: unknown[] = [];
    const kind: ActorKind<{ n: number }, unknown, { n: number }, unknown> = {
      name: 'probe',
      topic,
      decider: {
        initial: () => ({ n: 0 }),
        decide: (_s, c) => ({ events: [{ n: 1 }], reply: { got: c } }),
        evolve: (s, e) => ({ n: s.n + e.n }),
      },
      parse: (c) => {
        if ((c as { refuse?: boolean }).refuse) throw new Error('refused');
        got.push(c);
        return c;
      },
      toSnapshot: (s) => s,
      fromSnapshot: (j) => j as { n: number },
      project: async () => undefined,
    };
    const runtime = new Runtime({
      bus,
      store: new SqlRuntimeStore(orm),
      nodeId: 'probe-node',
      groupId: `${prefix}g`,
      kinds: [{ kind, owns: () => true }],
      partitions: { [topic]: 3 },
      log: pino({ level: 'silent' }),
    });
    await runtime.start();
    const asker = new Asker(bus, `${prefix}probe-node`, 60_000);
    await asker.start();
    t.teardown(async () => {
      await asker.stop();
      await runtime.stop();
      await orm.close();
      await bus.close();
      await db.drop();
    });
    const cmd = { amount: 12345678901234567890n, absent: undefined, list: [1, undefined], at: new Date(0), text: 'a"b' };
    const asJson = { amount: '12345678901234567890', list: [1, null], at: '1970-01-01T00:00:00.000Z', text: 'a"b' };
    const reply = await asker.ask({ topic, key: 'k', cmd, id: 'probe-1' });
    t.deepEqual(got, [asJson], 'the owner parses what JSON would have carried');
    t.deepEqual(reply, { got: asJson });
    cmd.amount = 0n;
    cmd.list.push(2);
    t.deepEqual(got[0], asJson, "the owner's command is not the asker's object");
    // A command its owner refuses is dead-lettered as the record's text: in process that text is
    // built only then, and it is the same JSON.
    await t.throwsAsync(asker.ask({ topic, key: 'k2', cmd: { refuse: true, amount: 5n }, id: 'probe-2' }), { instanceOf: AskFailed });
    const [letter] = await orm.em.fork().execute(`select payload from dead_letters where record_key = 'k2'`);
    const kept = JSON.parse(letter.payload);
    t.deepEqual([kept.id, kept.cmd], ['probe-2', { refuse: true, amount: '5' }]);
  });
}

test('kafka: a second runtime on the same store resumes from snapshots and offsets', async (t) => {
  const db = await freshDatabase();
  const prefix = `t${randomBytes(3).toString('hex')}.`;
  const bus1 = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'rt1' });
  const a = await rig(bus1, { url: db.url }, prefix);
  await a.asker.askMany(Array.from({ length: 9 }, (_, i) => ({ topic: a.topic, key: `k${i % 3}`, cmd: { add: 2, seq: i } })));
  await a.close();
  await bus1.close();
  const bus2 = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'rt2' });
  const b = await rig(bus2, { url: db.url }, prefix);
  t.teardown(async () => {
    await b.close();
    await bus2.close();
    await db.drop();
  });
  const r = await b.asker.ask({ topic: b.topic, key: 'k1', cmd: { add: 1, seq: 99 } });
  t.deepEqual(r, { n: 7 }, 'state of k1 (3 × 2) came back from its snapshot; nothing replayed twice');
  t.deepEqual(await b.effects(), [{ key: 'k1', n: 7 }], 'the new owner applied only the new command');
});

test('in-process: a decider that throws is dead-lettered alone; its half-changed state is not kept', async (t) => {
  const bus = new MemoryBus(3);
  const r = await rig(bus, {}, 'p.');
  t.teardown(async () => {
    await r.close();
    await bus.close();
  });
  const failed = await r.asker
    .askMany([
      { topic: r.topic, key: 'k', cmd: { add: 1, seq: 1 } },
      { topic: r.topic, key: 'k', cmd: { add: -5, seq: 2 } },
      { topic: r.topic, key: 'k', cmd: { add: 1, seq: 3 } },
    ])
    .catch((e) => e);
  t.regex(String(failed?.message), /decider failed: negative/);
  const one = await r.asker.ask({ topic: r.topic, key: 'k', cmd: { add: 0, seq: 4 } }).catch((e) => e);
  t.deepEqual(one, { n: 2 }, 'the two good commands count; the bad one left nothing behind');
  const dead = await (r.orm.em.fork() as any).execute("select reason from dead_letters where reason like 'decider failed%'");
  t.is(dead.length, 1);
});

/** A migrated store database for a store test (PostgreSQL, or PGlite in memory), dropped at its end. */
test('a commit from a stale owner is fenced', async (t) => {
  const orm = await openOrm({ dataDir: 'memory://' });
  await migrate(orm);
  t.teardown(() => orm.close());
  const store = new SqlRuntimeStore(orm);
  await store.resetOffset('g', 'topic', 0, 10n, 'a');
  const base = {
    groupId: 'g',
    topic: 'topic',
    partition: 0,
    owner: 'a',
    snapshots: [],
    inbox: [],
    deadLetters: [],
    effects: async () => {},
  };
  t.true(await store.commit({ ...base, expectedNext: 10n, next: 12n, replayFrom: 12n }));
  t.false(await store.commit({ ...base, expectedNext: 10n, next: 11n, replayFrom: 11n, owner: 'stale' }));
  t.is(await store.loadOffset('g', 'topic', 0), 12n);
});

for (const store of ['PGlite', 'PostgreSQL'] as const) {
  test(`${store}: one bookkeeping statement: a key applied before is InboxSeen and nothing moves; a stale owner is fenced first`, async (t) => {
    const orm = await storeDb(t, store);
    const s = new SqlRuntimeStore(orm);
    await s.resetOffset('g', 'topic', 0, 10n, 'a');
    const sql = (q: string) => (orm.em.fork() as any).execute(q) as Promise<any[]>;
    const commit = (o: { expectedNext: bigint; owner?: string; keys: string[]; letter: string }) =>
      s.commit({
        groupId: 'g',
        topic: 'topic',
        partition: 0,
        owner: o.owner ?? 'a',
        expectedNext: o.expectedNext,
        next: o.expectedNext + 1n,
        replayFrom: o.expectedNext + 1n,
        snapshots: [{ kind: 'k', key: `s-${o.letter}`, state: { letter: o.letter } }],
        inbox: o.keys.map((key) => ({ key, reply: { ok: o.letter }, offset: o.expectedNext })),
        journal: [{ kind: 'k', key: `j-${o.letter}`, envelope: '{}' }],
        forwards: [{ topic: 'next', key: 'x', value: '{}', headers: {}, msgKey: `fwd-${o.letter}` }],
        deadLetters: [],
        effects: async (tx) => {
          await tx.execute("insert into dead_letters (source, reason, payload, created_at) values (?, 'test', '{}', now())", [
            `effect-${o.letter}`,
          ]);
        },
      });
    t.true(await commit({ expectedNext: 10n, keys: ['k1', 'k2'], letter: 'a' }));
    const counts = async () =>
      (
        await sql(`select (select count(*) from command_inbox)::int as inbox, (select count(*) from actor_journal)::int as journal,
          (select count(*) from actor_snapshots)::int as snaps, (select count(*) from outbox)::int as outbox,
          (select count(*) from dead_letters where source like 'effect-%')::int as effects`)
      )[0];
    t.deepEqual(await counts(), { inbox: 2, journal: 1, snaps: 1, outbox: 1, effects: 1 });
    // k2 was applied before: the whole commit is refused (InboxSeen), its rows and its move with it.
    const seen = await commit({ expectedNext: 11n, keys: ['k3', 'k2'], letter: 'b' }).catch((e) => e);
    t.true(seen instanceof InboxSeen, String(seen));
    t.is(await s.loadOffset('g', 'topic', 0), 11n);
    t.deepEqual(await counts(), { inbox: 2, journal: 1, snaps: 1, outbox: 1, effects: 1 });
    // Stale and seen at once: fenced wins (the worker must stop, not re-decide).
    t.false(await commit({ expectedNext: 10n, owner: 'stale', keys: ['k1'], letter: 'c' }));
    t.true(await commit({ expectedNext: 11n, keys: ['k3'], letter: 'd' }));
    t.deepEqual(await counts(), { inbox: 3, journal: 2, snaps: 2, outbox: 2, effects: 2 });
  });
}

/**
 * A group-commit test's commit: partition `partition` moves from `expectedNext`, snapshots its key,
 * writes the effect `effect-<letter>` (and, with `inbox`, the inbox row `cmd-<letter>`).
 */
function effectCommit(store: SqlRuntimeStore, partition: number, expectedNext: bigint, letter: string, o: { inbox?: boolean } = {}) {
  return store.commit({
    ...partitionMove(partition, expectedNext, expectedNext + 1n),
    snapshots: [{ kind: 'k', key: `key${partition}`, state: { partition } }],
    inbox: o.inbox ? [{ key: `cmd-${letter}`, reply: { ok: letter }, offset: expectedNext }] : [],
    deadLetters: [],
    effects: async (tx) => {
      await tx.execute('insert into dead_letters (source, reason, payload, created_at) values (?, ?, ?, now())', [
        `effect-${letter}`,
        'test',
        '{}',
      ]);
    },
  });
}

test('group commit: commits of one turn go as one transaction, and so do those that wait for a turn; a fenced member is refused alone, the others commit', async (t) => {
  const orm = await storeDb(t);
  const store = new SqlRuntimeStore(orm, 1); // one transaction at a time: what arrives meanwhile waits and is grouped
  for (const p of [0, 1, 2, 3, 4]) await store.resetOffset('g', 'topic', p, 10n, 'a');
  const commit = (partition: number, expectedNext: bigint, letter: string) => effectCommit(store, partition, expectedNext, letter);
  // A session of our own holds a partition's offset row, so that a group's transaction waits in
  // PostgreSQL (its fence updates that row) while we issue more commits.
  const locker = new pg.Client({ connectionString: orm.config.get('clientUrl') as string });
  await locker.connect();
  t.teardown(() => locker.end());
  const hold = async (partition: number) => {
    await locker.query('begin');
    await locker.query("select 1 from consumer_offsets where group_id = 'g' and topic = 'topic' and partition = $1 for update", [
      partition,
    ]);
  };
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  // A and B are issued on one turn of the event loop: one transaction. C comes while it runs: it
  // waits for the turn and goes in the next one.
  await hold(0);
  const ab = Promise.all([commit(0, 10n, 'a'), commit(1, 10n, 'b')]);
  await pause(200);
  const c = commit(2, 10n, 'c');
  await pause(100);
  await locker.query('commit');
  t.deepEqual([...(await ab), await c], [true, true, true]);
  t.is(await xminOf(orm, 0), await xminOf(orm, 1), 'A and B: one transaction');
  t.not(await xminOf(orm, 1), await xminOf(orm, 2), 'C waited for the next');

  // D is in flight; E (good) and F (stale: partition 0 is at 11 now) wait and are grouped. F's fence
  // rolls the group back; each then commits alone: E commits, F is refused, D is untouched.
  await hold(3);
  const d = commit(3, 10n, 'd');
  await pause(200);
  const ef = Promise.all([commit(4, 10n, 'e'), commit(0, 10n, 'f')]);
  await pause(100);
  await locker.query('commit');
  t.deepEqual([await d, ...(await ef)], [true, true, false]);
  t.not(await xminOf(orm, 3), await xminOf(orm, 4), 'D went before E and F');
  t.is(await store.loadOffset('g', 'topic', 4), 11n);
  t.is(await store.loadOffset('g', 'topic', 0), 11n, 'the fenced commit moved nothing');
  const effects = (
    await (orm.em.fork() as any).execute("select source from dead_letters where source like 'effect-%' order by source")
  ).map((r: any) => r.source);
  t.deepEqual(effects, ['effect-a', 'effect-b', 'effect-c', 'effect-d', 'effect-e'], "every effect but the fenced commit's, once");
  const snaps = await store.loadSnapshots('k', ['key0', 'key4']);
  t.is(snaps.get('key0')?.next, 11n, "key0's snapshot is A's, not F's");
  t.is(snaps.get('key4')?.next, 11n);
});

test('PGlite: commits issued on one turn of the event loop go as one transaction; a fenced member is refused alone', async (t) => {
  const orm = await storeDb(t, 'PGlite');
  const store = new SqlRuntimeStore(orm);
  for (const p of [0, 1, 2, 3, 4]) await store.resetOffset('g', 'topic', p, 10n, 'a');
  const commit = (partition: number, expectedNext: bigint, letter: string) =>
    effectCommit(store, partition, expectedNext, letter, { inbox: true });
  // The engine runs one transaction at a time and synchronously: without the group these were three.
  t.deepEqual(await Promise.all([commit(0, 10n, 'a'), commit(1, 10n, 'b'), commit(2, 10n, 'c')]), [true, true, true]);
  t.is(await xminOf(orm, 0), await xminOf(orm, 1));
  t.is(await xminOf(orm, 1), await xminOf(orm, 2), 'A, B and C: one transaction');
  // F is stale (partition 0 is at 11): the group rolls back whole, then each commits alone.
  t.deepEqual(await Promise.all([commit(3, 10n, 'd'), commit(4, 10n, 'e'), commit(0, 10n, 'f')]), [true, true, false]);
  t.not(await xminOf(orm, 3), await xminOf(orm, 4), 'D and E committed alone after the group failed');
  t.is(await store.loadOffset('g', 'topic', 0), 11n, 'the fenced commit moved nothing');
  const rows = async (sql: string) => ((await (orm.em.fork() as any).execute(sql)) as any[]).map((r) => Object.values(r)[0]);
  t.deepEqual(await rows("select source from dead_letters where source like 'effect-%' order by source"), [
    'effect-a',
    'effect-b',
    'effect-c',
    'effect-d',
    'effect-e',
  ]);
  t.deepEqual(await rows('select key from command_inbox order by key'), ['cmd-a', 'cmd-b', 'cmd-c', 'cmd-d', 'cmd-e']);
  // One commit alone still commits (nothing waits for a second).
  t.true(await commit(1, 11n, 'g'));
});

for (const on of ['PostgreSQL', 'PGlite'] as const) {
  test(`group commit on ${on}: one bookkeeping call keeps each member's journal, snapshots and inbox apart; a repeated command is refused alone`, async (t) => {
    const orm = await storeDb(t, on);
    const store = new SqlRuntimeStore(orm, 1);
    for (const p of [0, 1, 2, 3]) await store.resetOffset('g', 'topic', p, 10n, 'a');
    const commit = (partition: number, cmd: string, o: { snapshot?: boolean; expectedNext?: bigint } = {}) => {
      const at = o.expectedNext ?? 10n;
      return store.commit({
        ...partitionMove(partition, at, at + 2n),
        snapshots: o.snapshot ? [{ kind: 'k', key: `key${partition}`, state: { partition } }] : [],
        inbox: [{ key: cmd, reply: { ok: cmd }, offset: at }],
        deadLetters: [],
        journal: o.snapshot
          ? []
          : [
              { kind: 'k', key: `key${partition}`, envelope: `${cmd}#1` },
              { kind: 'k', key: `key${partition}`, envelope: `${cmd}#2` },
            ],
        effects: async () => {},
      });
    };
    const rows = async (sql: string) => (await (orm.em.fork() as any).execute(sql)) as any[];
    // On PostgreSQL A holds the turn and B, C and D wait and go together; on PGlite all four go
    // together (issued on one turn of the event loop): one call of the group's bookkeeping.
    const first = commit(0, 'a');
    const grouped = [commit(1, 'b'), commit(2, 'c'), commit(3, 'd', { snapshot: true })];
    t.deepEqual(await Promise.all([first, ...grouped]), [true, true, true, true]);
    if (on === 'PostgreSQL') t.is(await xminOf(orm, 1), await xminOf(orm, 3), 'B, C and D: one transaction');
    t.deepEqual(
      (await rows('select key, topic, partition, envelope from actor_journal order by key, id')).map((r) => [
        r.key,
        r.partition,
        r.envelope,
      ]),
      [
        ['key0', 0, 'a#1'],
        ['key0', 0, 'a#2'],
        ['key1', 1, 'b#1'],
        ['key1', 1, 'b#2'],
        ['key2', 2, 'c#1'],
        ['key2', 2, 'c#2'],
      ],
      "each member's lines, in order, under its own partition",
    );
    t.deepEqual(
      (await rows('select key, source_partition as p, source_offset::text as o from command_inbox order by key')).map((r) => [
        r.key,
        r.p,
        r.o,
      ]),
      [
        ['a', 0, '10'],
        ['b', 1, '10'],
        ['c', 2, '10'],
        ['d', 3, '10'],
      ],
    );
    const [snap] = await rows("select partition, next_offset::text as n from actor_snapshots where key = 'key3'");
    t.deepEqual([snap.partition, snap.n], [3, '12']);
    // A snapshot of key1 in a group deletes key1's lines only; a repeated command (c again) rolls its
    // group back and is refused alone: the other members commit.
    const again = [commit(1, 'e', { snapshot: true, expectedNext: 12n }), commit(2, 'c', { expectedNext: 12n })];
    const hold = commit(0, 'f', { expectedNext: 12n });
    const [f, e, c] = await Promise.allSettled([hold, ...again]);
    t.deepEqual([f.status, e.status], ['fulfilled', 'fulfilled']);
    t.true(c.status === 'rejected' && c.reason instanceof InboxSeen, 'the repeat is InboxSeen');
    t.deepEqual(
      (await rows('select distinct key from actor_journal order by key')).map((r) => r.key),
      ['key0', 'key2'],
    );
    t.is(await store.loadOffset('g', 'topic', 2), 12n, "the refused member's partition did not move");
    t.is(await store.loadOffset('g', 'topic', 1), 14n);
  });
}

test('group commit of rows-only commits: one fence and one insert for all; a stale member rolls the group back and is refused alone', async (t) => {
  const orm = await storeDb(t);
  const store = new SqlRuntimeStore(orm, 1);
  for (const p of [0, 1, 2, 3, 4, 5]) await store.resetOffset('g', 'topic', p, 10n, 'a');
  // The ingest's shape: a fence and inserts over a JSON array of rows (merged across members).
  const commit = (partition: number, expectedNext: bigint, letters: string[]) =>
    store.commit({
      ...partitionMove(partition, expectedNext, expectedNext + 5n),
      snapshots: [],
      inbox: [],
      deadLetters: [],
      effects: async (tx) => {
        await tx.execute(
          "insert into dead_letters (source, reason, payload, created_at) select t.s, 'test', '{}', now() from jsonb_to_recordset(?::jsonb) as t(s text)",
          [JSON.stringify(letters.map((l) => ({ s: `rows-${l}` })))],
        );
      },
    });
  const offsets = async () => Promise.all([0, 1, 2, 3, 4, 5].map((p) => store.loadOffset('g', 'topic', p)));

  const [a, b, c] = await Promise.all([commit(0, 10n, ['a']), commit(1, 10n, ['b1', 'b2']), commit(2, 10n, ['c'])]);
  t.deepEqual([a, b, c], [true, true, true]);
  t.is(await xminOf(orm, 1), await xminOf(orm, 2), 'B and C: one transaction');
  t.deepEqual((await offsets()).slice(0, 3), [15n, 15n, 15n], 'one fence moved every member on');

  // D runs; E and G (good) and F (stale: partition 0 is at 15) are grouped. The group's one fence
  // fails on F: rolled back whole, each then commits alone.
  const [d, e, f, g] = await Promise.all([
    commit(3, 10n, ['d']),
    commit(4, 10n, ['e']),
    commit(0, 10n, ['f']),
    commit(5, 10n, ['g1', 'g2']),
  ]);
  t.deepEqual([d, e, f, g], [true, true, false, true]);
  t.deepEqual(await offsets(), [15n, 15n, 15n, 15n, 15n, 15n], 'the fenced commit moved nothing');
  const rows = (await (orm.em.fork() as any).execute("select source from dead_letters where source like 'rows-%' order by source")).map(
    (r: any) => r.source,
  );
  t.deepEqual(
    rows,
    ['rows-a', 'rows-b1', 'rows-b2', 'rows-c', 'rows-d', 'rows-e', 'rows-g1', 'rows-g2'],
    "every row but the fenced commit's, once",
  );
});

for (const on of ['PostgreSQL', 'PGlite'] as const) {
  test(`group commit on ${on}: members made of the same rows statements (open orders, ledger) share one call of each`, async (t) => {
    const orm = await storeDb(t, on);
    const store = new SqlRuntimeStore(orm, 1);
    const scripts: string[] = [];
    const run = (store as any).script as (sql: string) => Promise<unknown>;
    (store as any).script = (sql: string) => {
      scripts.push(sql);
      return run(sql);
    };
    for (const p of [0, 1, 2, 3]) await store.resetOffset('g', 'topic', p, 10n, 'a');
    const at = '2026-11-26T00:00:00.000Z';
    // A book's commit: its orders upserted and its market's ledger lines appended (with its inbox row).
    const book = (partition: number, market: string, orders: string[]) =>
      store.commit({
        ...partitionMove(partition, 10n, 11n),
        snapshots: [],
        inbox: [{ key: `cmd-${market}`, reply: { ok: true }, offset: 10n }],
        deadLetters: [],
        effects: async (tx) => {
          const rows = orders.map((id) => ({
            id,
            market,
            asset_id: `${market}-yes`,
            owner: 'W',
            owner_lc: 'w',
            side: 'BUY',
            outcome: 'YES',
            original_size: 100,
            size_matched: 0,
            price: 500_000,
            status: 'LIVE',
            associate_trades: [],
            type: 'GTC',
            fee_rate_bps: 0,
            expiration: 0,
            created_at: at,
            updated_at: at,
          }));
          await tx.execute('select open_orders_upsert(?::jsonb)', [JSON.stringify(rows)]);
          const lines = orders.map((id, ord) => ({
            market,
            topic: 'market',
            type: 'order_placed',
            owner_lc: 'w',
            payload: { id },
            at,
            ord,
          }));
          await tx.execute('select ledger_append(?::jsonb)', [JSON.stringify(lines)]);
        },
      });
    const first = book(0, 'm0', ['o0']);
    const grouped = [book(1, 'm1', ['o1a', 'o1b']), book(2, 'm2', ['o2']), book(3, 'm3', ['o3a', 'o3b', 'o3c'])];
    t.deepEqual(await Promise.all([first, ...grouped]), [true, true, true, true]);
    const group = scripts.find((sql) => sql.includes('o1a'))!;
    t.true(group.includes('o2') && group.includes('o3c'), 'B, C and D went together');
    t.is(group.split('ledger_append(').length - 1, 1, 'one ledger append for the group');
    t.is(group.split('open_orders_upsert(').length - 1, 1, 'one open-orders upsert for the group');
    const rows = async (sql: string) => (await (orm.em.fork() as any).execute(sql)) as any[];
    t.deepEqual(
      (await rows("select market, seq::int as seq, payload->>'id' as id from ledger_messages order by market, seq")).map((r) => [
        r.market,
        r.seq,
        r.id,
      ]),
      [
        ['m0', 1, 'o0'],
        ['m1', 1, 'o1a'],
        ['m1', 2, 'o1b'],
        ['m2', 1, 'o2'],
        ['m3', 1, 'o3a'],
        ['m3', 2, 'o3b'],
        ['m3', 3, 'o3c'],
      ],
      "each market's lines numbered from 1, in its member's order",
    );
    t.deepEqual(
      (await rows('select id from open_orders order by id')).map((r) => r.id),
      ['o0', 'o1a', 'o1b', 'o2', 'o3a', 'o3b', 'o3c'],
    );
  });
}

test('asks nobody answers time out; in one call, the answered ones still resolve', async (t) => {
  const bus = new MemoryBus();
  await bus.ensureTopics([
    { topic: 'echo', partitions: 2 },
    { topic: 'void', partitions: 2 },
  ]);
  // An owner for `echo` only: it answers every command it reads on its requester's reply topic.
  const echo = await bus.consume({
    groupId: 'echo',
    topics: ['echo'],
    fromBeginning: true,
    onBatch: async (b) => {
      for (const r of b.records) {
        const corr = r.headers?.corr;
        const to = r.headers?.['reply-to'];
        if (corr && to) await bus.send(to, [{ key: corr, value: JSON.stringify({ corr, reply: JSON.parse(r.value).cmd }) }]);
      }
      return { done: true };
    },
  });
  const asker = new Asker(bus, 'asker-timeouts', 300);
  await asker.start();
  try {
    const started = Date.now();
    const outcomes = await Promise.allSettled([
      asker
        .askMany([
          { topic: 'echo', key: 'a', cmd: 1 },
          { topic: 'void', key: 'b', cmd: 2 },
          { topic: 'echo', key: 'c', cmd: 3 },
        ])
        .then(() => 'all answered'),
      asker.ask({ topic: 'echo', key: 'd', cmd: 4 }),
      asker.ask({ topic: 'void', key: 'e', cmd: 5 }, 150),
    ]);
    t.is(outcomes[0].status, 'rejected');
    t.true((outcomes[0] as PromiseRejectedResult).reason instanceof AskTimeout);
    t.deepEqual(outcomes[1], { status: 'fulfilled', value: 4 });
    t.true((outcomes[2] as PromiseRejectedResult).reason instanceof AskTimeout);
    t.true(Date.now() - started >= 290);
    // The answered asks of a call that timed out were not lost: each of them resolved on its own.
    const seen: string[] = [];
    asker.observe = (topic, outcome) => seen.push(`${topic}:${outcome}`);
    await asker
      .askMany([
        { topic: 'echo', key: 'f', cmd: 6 },
        { topic: 'void', key: 'g', cmd: 7 },
      ])
      .catch(() => undefined);
    t.deepEqual(seen.sort(), ['echo:ok', 'void:timeout']);
  } finally {
    await asker.stop();
    await echo.stop();
  }
});

test('in-process bus: records every group has read are dropped; a lagging group still gets all of its own', async (t) => {
  const bus = new MemoryBus(1);
  await bus.ensureTopics([{ topic: 'log', partitions: 1 }]);
  const read = { fast: [] as number[], slow: [] as number[] };
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const fast = await bus.consume({
    groupId: 'fast',
    topics: ['log'],
    fromBeginning: true,
    onBatch: async (b) => {
      for (const r of b.records) read.fast.push(Number(r.value));
      return { done: true };
    },
  });
  const slow = await bus.consume({
    groupId: 'slow',
    topics: ['log'],
    fromBeginning: true,
    onBatch: async (b) => {
      await held;
      for (const r of b.records) read.slow.push(Number(r.value));
      return { done: true };
    },
  });
  const until = async (ok: () => boolean) => {
    for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
    t.true(ok());
  };
  try {
    for (let i = 0; i < 3000; i += 100)
      await bus.send(
        'log',
        Array.from({ length: 100 }, (_, j) => ({ key: 'k', value: String(i + j) })),
      );
    await until(() => read.fast.length === 3000);
    t.is((await bus.offsets('log'))[0].low, 0n, 'nothing dropped while a group has not read it');
    release();
    await until(() => read.slow.length === 3000);
    await bus.send('log', [{ key: 'k', value: '3000' }]);
    await until(() => read.fast.length === 3001 && read.slow.length === 3001);
    t.true((await bus.offsets('log'))[0].low >= 2048n, 'what both groups read is dropped');
    t.is((await bus.offsets('log'))[0].high, 3001n);
    t.deepEqual(
      read.slow,
      Array.from({ length: 3001 }, (_, i) => i),
    );
    t.deepEqual(read.fast, read.slow);
  } finally {
    await fast.stop();
    await slow.stop();
  }
});

test('idle actors are stopped past the live limit and come back from their snapshots unchanged', async (t) => {
  const db = await freshDatabase();
  const r = await rig(new MemoryBus(3), db, `pv${randomBytes(3).toString('hex')}.`, 2);
  try {
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const expected = new Map(keys.map((k) => [k, 0]));
    let seq = 0;
    for (let round = 0; round < 4; round++) {
      // One key at a time, so that every partition keeps cycling through more keys than it may hold.
      for (const [i, key] of keys.entries()) {
        const add = round * 10 + i + 1;
        const reply = await r.asker.ask<{ n: number }>({ topic: r.topic, key, cmd: { add, seq: seq++ } });
        expected.set(key, expected.get(key)! + add);
        t.is(reply.n, expected.get(key)!, `${key} after round ${round}`);
      }
      const live = r.runtime.actorCounts().counter ?? 0;
      t.true(live <= 3 * 2, `at most 2 live actors per partition, saw ${live}`);
    }
    const rows = await r.orm.em.fork().execute('select key, state from actor_snapshots where kind = ? order by key', ['counter']);
    t.is(rows.length, keys.length);
    for (const row of rows) {
      const state = typeof row.state === 'string' ? JSON.parse(row.state) : row.state;
      t.is(state.n, expected.get(row.key));
      t.is(state.seen.length, 4);
    }
  } finally {
    await r.close();
    await db.drop();
  }
});

const NEVER: CheckpointPolicy = { everyBatches: 1_000_000, maxAgeMs: 3_600_000 };

async function counters(r: { orm: any }) {
  const rows = await r.orm.em.fork().execute('select key, state from actor_snapshots where kind = ? order by key', ['counter']);
  return Object.fromEntries(rows.map((x: any) => [x.key, typeof x.state === 'string' ? JSON.parse(x.state) : x.state]));
}

test('kafka: actors newer than their snapshots are rebuilt by replay after a crash — duplicates and dead letters skipped as the first time', async (t) => {
  const db = await freshDatabase();
  const prefix = `ck${randomBytes(3).toString('hex')}.`;
  const bus1 = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'ck1' });
  const a = await rig(bus1, { url: db.url }, prefix, undefined, NEVER);
  const ask = (r: typeof a, key: string, add: number, seq: number, id?: string) =>
    r.asker.ask<{ n: number }>({ topic: r.topic, key, cmd: { add, seq }, id });
  await a.asker.askMany(Array.from({ length: 9 }, (_, i) => ({ topic: a.topic, key: `k${i % 3}`, cmd: { add: 1, seq: i } })));
  t.deepEqual(await ask(a, 'k0', 10, 20, 'once'), { n: 13 });
  t.deepEqual(await ask(a, 'k0', 10, 20, 'once'), { n: 13 }, 'a duplicate is answered, not applied');
  // Sent together: the same id twice (the second is answered like the first), and a decider that throws.
  const mixed = await a.asker
    .askMany([
      { topic: a.topic, key: 'k2', cmd: { add: 5, seq: 30 }, id: 'twice' },
      { topic: a.topic, key: 'k2', cmd: { add: 5, seq: 30 }, id: 'twice' },
      { topic: a.topic, key: 'k1', cmd: { add: -5, seq: 31 } },
      { topic: a.topic, key: 'k1', cmd: { add: 1, seq: 32 } },
      { topic: a.topic, key: 'k1', cmd: { add: 1, seq: 33 } },
    ])
    .catch((e) => e);
  t.regex(String(mixed?.message), /decider failed: negative/);
  t.deepEqual(await counters(a), {}, 'nothing checkpointed yet');
  const offsets = await a.orm.em
    .fork()
    .execute(
      'select partition, next_offset::int as next, replay_from::int as replay from consumer_offsets where topic = ? and next_offset > 0',
      [a.topic],
    );
  t.true(
    offsets.length > 0 && offsets.every((o: any) => o.replay !== null && o.replay < o.next),
    'every partition says where recovery must start reading',
  );
  const effectsBefore = (await a.effects()).length;
  await a.close({ flush: false }); // a crash: what only memory held is gone
  await bus1.close();

  const bus2 = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'ck2' });
  const b = await rig(bus2, { url: db.url }, prefix, undefined, { everyBatches: 1_000_000, maxAgeMs: 300 });
  t.teardown(async () => {
    await b.close();
    await bus2.close();
    await db.drop();
  });
  // No new command yet: the new owner starts reading where replay must begin (the group position
  // the old owner committed), rebuilds the unsaved actors at once and checkpoints them when idle.
  const ns = (x: Record<string, Counter>) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, v.n]));
  let rebuilt: Record<string, Counter> = {};
  for (let i = 0; i < 200 && JSON.stringify(ns(rebuilt)) !== JSON.stringify({ k0: 13, k1: 5, k2: 8 }); i++) {
    await new Promise((r) => setTimeout(r, 50));
    rebuilt = await counters(b);
  }
  t.deepEqual(ns(rebuilt), { k0: 13, k1: 5, k2: 8 }, 'rebuilt and saved without any new command');
  t.deepEqual(await b.effects(), [], 'the rebuild wrote no effect');
  t.deepEqual(await ask(b, 'k0', 1, 40), { n: 14 });
  t.deepEqual(await ask(b, 'k1', 1, 41), { n: 6 }, 'the command that threw is skipped again; its half-change is not replayed');
  t.deepEqual(await ask(b, 'k2', 1, 42), { n: 9 });
  t.deepEqual(await ask(b, 'k0', 10, 20, 'once'), { n: 13 }, 'still answered from the inbox');
  t.deepEqual(
    (await b.effects()).map((e) => e.key),
    ['k0', 'k1', 'k2'],
    'the replay wrote no effect; only the new commands did',
  );
  t.true(effectsBefore >= 8);
  // (The repeated key made its partition start over from the store: it is saved again when idle.)
  let snaps = await counters(b);
  for (let i = 0; i < 200 && (snaps.k0?.n !== 14 || snaps.k1?.n !== 6 || snaps.k2?.n !== 9); i++) {
    await new Promise((r) => setTimeout(r, 50));
    snaps = await counters(b);
  }
  t.deepEqual(snaps.k0.seen, [0, 3, 6, 20, 40]);
  t.deepEqual(snaps.k1.seen, [1, 4, 7, 32, 33, 41]);
  t.deepEqual(snaps.k2.seen, [2, 5, 8, 30, 42]);
  const dead = await b.orm.em.fork().execute("select count(*)::int as n from dead_letters where reason like 'decider failed%'");
  t.is(dead[0].n, 1, 'dead-lettered once, not again by the replay');
});

test('kafka: unsaved actors are checkpointed when idle, and saved at a graceful stop', async (t) => {
  const db = await freshDatabase();
  const prefix = `ci${randomBytes(3).toString('hex')}.`;
  const bus = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'ci' });
  t.teardown(async () => {
    await bus.close();
    await db.drop();
  });
  const a = await rig(bus, { url: db.url }, prefix, undefined, { everyBatches: 1_000_000, maxAgeMs: 300 });
  await a.asker.askMany(Array.from({ length: 6 }, (_, i) => ({ topic: a.topic, key: `k${i % 3}`, cmd: { add: 1, seq: i } })));
  t.true(a.runtime.unsavedActors() > 0);
  let snaps: any = {};
  // The checkpoint's rows are visible to this connection a moment before its commit has answered the
  // worker (which only then counts the actors saved): wait for both.
  for (let i = 0; i < 100 && (Object.keys(snaps).length < 3 || a.runtime.unsavedActors() > 0); i++) {
    await new Promise((r) => setTimeout(r, 50));
    snaps = await counters(a);
  }
  t.deepEqual(
    Object.fromEntries(Object.entries(snaps).map(([k, v]: any) => [k, v.n])),
    { k0: 2, k1: 2, k2: 2 },
    'written by the idle checkpoint',
  );
  t.is(a.runtime.unsavedActors(), 0);
  const pending = await a.orm.em.fork().execute('select count(*)::int as n from consumer_offsets where replay_from is not null');
  t.is(pending[0].n, 0, 'nothing left to replay');
  await a.close();

  const b = await rig(bus, { url: db.url }, prefix, undefined, NEVER);
  await b.asker.askMany(Array.from({ length: 3 }, (_, i) => ({ topic: b.topic, key: `k${i}`, cmd: { add: 5, seq: 10 + i } })));
  t.deepEqual(
    Object.fromEntries(Object.entries(await counters(b)).map(([k, v]: any) => [k, v.n])),
    { k0: 2, k1: 2, k2: 2 },
    'not yet saved',
  );
  await b.close();
  const orm = await openOrm({ databaseUrl: db.url });
  t.deepEqual(
    Object.fromEntries(Object.entries(await counters({ orm })).map(([k, v]: any) => [k, v.n])),
    { k0: 7, k1: 7, k2: 7 },
    'saved at the graceful stop',
  );
  await orm.close();
});

test('in-process: with no log to replay, snapshots are checkpointed and actors come back as snapshot + journal after a crash', async (t) => {
  const db = await freshDatabase();
  const prefix = `j${randomBytes(3).toString('hex')}.`;
  const sparse = { everyBatches: 1_000_000, maxAgeMs: 600_000 };
  const bus1 = new MemoryBus(3);
  const a = await rig(bus1, { url: db.url }, prefix, undefined, sparse);
  const ask = (r: typeof a, key: string, add: number, seq: number, id?: string) =>
    r.asker.ask<{ n: number }>({ topic: r.topic, key, cmd: { add, seq }, id });
  await a.asker.askMany(Array.from({ length: 9 }, (_, i) => ({ topic: a.topic, key: `k${i % 3}`, cmd: { add: 1, seq: i } })));
  t.deepEqual(await ask(a, 'k0', 10, 20, 'once'), { n: 13 });
  t.deepEqual(await counters(a), {}, 'no snapshot written with the batches');
  const journal = async () =>
    (await a.orm.em.fork().execute('select key, count(*)::int as n from actor_journal group by key order by key')).map((r: any) => [
      r.key,
      r.n,
    ]);
  t.deepEqual(await journal(), [
    ['k0', 4],
    ['k1', 3],
    ['k2', 3],
  ]);
  await a.close({ flush: false }); // a crash: the in-process bus and its records are gone
  await bus1.close();

  const bus2 = new MemoryBus(3);
  const b = await rig(bus2, { url: db.url }, prefix, undefined, sparse);
  t.teardown(async () => {
    await b.close();
    await bus2.close();
    await db.drop();
  });
  t.deepEqual(await ask(b, 'k0', 10, 20, 'once'), { n: 13 }, 'still answered from the inbox, not applied again');
  t.deepEqual(await ask(b, 'k0', 1, 30), { n: 14 }, 'k0 came back as its 4 journaled commands');
  t.deepEqual(await ask(b, 'k1', 1, 31), { n: 4 });
  t.deepEqual(await b.effects(), [
    { key: 'k0', n: 14 },
    { key: 'k1', n: 4 },
  ]);
  await b.runtime.stop(); // graceful: every actor with a journal on a running partition is saved and its journal gone (k2's partition ran no batch since the restart: its journal stays, to be replayed when k2 is next needed)
  const snaps = await counters(b);
  t.is(snaps.k0.n, 14);
  t.deepEqual(snaps.k0.seen, [0, 3, 6, 20, 30]);
  t.is(snaps.k1.n, 4);
  t.deepEqual(await journal(), [['k2', 3]]);
});

test('in-process: a checkpoint waits until the records since the last one are SNAPSHOT_SHARE times what it wrote, and comes within maxAgeMs × 15 anyway', async (t) => {
  const db = await freshDatabase();
  const prefix = `sz${randomBytes(3).toString('hex')}.`;
  const bus = new MemoryBus(3);
  // Every batch may checkpoint, and any change is old enough after 100 ms: before, every batch wrote its actors.
  const a = await rig(bus, { url: db.url }, prefix, undefined, { everyBatches: 1, maxAgeMs: 100 });
  t.teardown(async () => {
    await a.close();
    await db.drop();
  });
  const ask = (key: string, add: number, seq: number) => a.asker.ask<{ n: number }>({ topic: a.topic, key, cmd: { add, seq } });
  const saved = async (key: string) => (await counters(a))[key]?.n;
  const until = async (key: string, n: number, ms: number) => {
    const end = Date.now() + ms;
    while (Date.now() < end && (await saved(key)) !== n) await new Promise((r) => setTimeout(r, 25));
    return saved(key);
  };
  // One actor whose state (every seq it saw) is large next to one command: 300 seqs of six digits.
  await a.asker.askMany(Array.from({ length: 300 }, (_, i) => ({ topic: a.topic, key: 'big', cmd: { add: 1, seq: 100_000 + i } })));
  t.is(await until('big', 300, 5_000), 300, 'saved: its first snapshots');
  // Once it is saved with ~2 KB of state, one ~20-character command is not worth rewriting it for...
  t.deepEqual(await ask('big', 1, 200_000), { n: 301 });
  await new Promise((r) => setTimeout(r, 600)); // six times maxAgeMs
  t.is(await saved('big'), 300, 'one small command does not rewrite a large snapshot');
  t.true(a.runtime.unsavedActors() > 0);
  // ...and is saved once the oldest unsaved change is maxAgeMs × SNAPSHOT_MAX_AGE_FACTOR (1.5 s) old.
  t.is(await until('big', 301, 5_000), 301, 'saved within the bound');
  // Records worth SNAPSHOT_SHARE (4) times the last snapshot are saved at once (by the batch, not the bound).
  await a.asker.askMany(Array.from({ length: 200 }, (_, i) => ({ topic: a.topic, key: 'big', cmd: { add: 1, seq: 300_000 + i } })));
  t.is(await until('big', 501, 1_000), 501, 'saved without waiting for the bound');
});

// A poison record never stalls a partition (issue 19, item 2): records that PostgreSQL refuses (a
// value beyond its varchar column, a NUL byte, an int overflow) sit between valid records of one
// partition; the runtime narrows the failing batch down, commits the valid records, dead-letters the
// poison ones with their reason, answers their askers with the error and goes on, within seconds,
// on both buses. A failure of the moment (a lock not granted) is retried and dead-letters nothing.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { MemoryBus } from '../../../src/runtime/memory-bus.ts';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { AskFailed } from '../../../src/runtime/asker.ts';
import type { Bus } from '../../../src/runtime/types.ts';
import type { CheckpointPolicy } from '../../../src/runtime/partition-worker.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';
import { note, notesRig, NOTES_TABLE } from '../../helpers/notes-kind.ts';

const buses: [string, () => Bus][] = [
  ['in-process', () => new MemoryBus(3)],
  ['kafka', () => new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'poison-test' })],
];

const settle = (p: Promise<unknown>) =>
  p.then(
    (value: any) => ({ value, error: null as any }),
    (error) => ({ value: null as any, error }),
  );

// Kafka also with sparse checkpoints (as a node runs): every retried half rebuilds the partition's actors by replay.
const poisonCases: [string, () => Bus, CheckpointPolicy?][] = [
  ...buses,
  ['kafka, sparse checkpoints', buses[1][1], { everyBatches: 1_000, maxAgeMs: 60_000 }],
];

for (const [name, makeBus, checkpoint] of poisonCases) {
  test(`${name}: a poisoned partition recovers within seconds: valid records around the poison ones are applied, the poison ones dead-lettered`, async (t) => {
    const db = await freshDatabase();
    const bus = makeBus();
    const prefix = `ps${randomBytes(3).toString('hex')}.`;
    const r = await notesRig(bus, db.url, prefix, { checkpoint });
    t.teardown(async () => {
      await r.close();
      await bus.close();
      await db.drop();
    });
    const id = (seq: number) => `${prefix}c${seq}`;
    t.deepEqual(await r.asker.ask(note(r.topic, 'k', 0, 'warm', id(0))), { n: 1 });

    // One key, one partition, one send: valid, valid, too long, valid, NUL byte, valid, int overflow, valid.
    const started = Date.now();
    const poison: Record<number, string> = { 3: 'x'.repeat(300), 5: 'a\u0000b', 7: 'fine' };
    const specs = [1, 2, 3, 4, 5, 6, 7, 8].map((seq) => note(r.topic, 'k', seq === 7 ? 2 ** 40 : seq, poison[seq] ?? `ok${seq}`, id(seq)));
    // Each ask on its own (askMany would reject at the first error): every asker is answered.
    const outcomes = await Promise.all(specs.map((s) => settle(r.asker.ask(s))));
    const elapsed = Date.now() - started;
    t.true(elapsed < 8_000, `every ask answered in ${elapsed} ms`);
    t.deepEqual(
      outcomes.map((o) => (o.error ? 'failed' : o.value.n)),
      [2, 3, 'failed', 4, 'failed', 5, 'failed', 6],
    );
    for (const o of outcomes.filter((x) => x.error)) {
      t.true(o.error instanceof AskFailed, `the poison commands' askers get an error, not a timeout: ${o.error}`);
      t.regex(String(o.error.message), /^commit failed: /);
    }

    // The valid ones were applied once, in order; the poison ones left nothing.
    const rows = await r.q(`select seq, v from ${NOTES_TABLE} where key = 'k' order by seq`);
    t.deepEqual(
      rows.map((x) => x.v),
      ['warm', 'ok1', 'ok2', 'ok4', 'ok6', 'ok8'],
    );
    // Their askers are answered from the inbox (retried asks): counts skip the poison commands.
    const again = await Promise.all([1, 2, 4, 6, 8].map((seq) => r.asker.ask<{ n: number }>(note(r.topic, 'k', seq, `ok${seq}`, id(seq)))));
    t.deepEqual(
      again.map((x) => x.n),
      [2, 3, 4, 5, 6],
    );
    t.deepEqual(await r.asker.ask(note(r.topic, 'k', 9, 'after', id(9))), { n: 7 }, 'the actor never counted the poison commands');
    t.is((await r.q(`select count(*)::int as n from ${NOTES_TABLE}`))[0].n, 7);

    // Dead letters: one per poison record, with the reason, the payload and the key to replay it with.
    const dead = await r.q(
      "select source, reason, payload, record_key, replayed_at from dead_letters where reason like 'commit failed:%' order by id",
    );
    t.is(dead.length, 3, JSON.stringify(dead));
    t.true(dead.every((d) => d.source.startsWith(`${r.topic}/`) && d.record_key === 'k' && d.replayed_at === null));
    t.regex(dead[0].reason, /^commit failed: value too long for type character varying\(16\) \(SQLSTATE 22001\)$/);
    t.regex(dead[1].reason, /^commit failed: invalid message format \(SQLSTATE 08P01\)$/);
    t.regex(dead[2].reason, /^commit failed: integer out of range \(SQLSTATE 22003\)$/);
    t.deepEqual(
      dead.map((d) => JSON.parse(d.payload).cmd.v),
      ['x'.repeat(300), 'a\u0000b', 'fine'],
    );
    t.deepEqual(
      dead.map((d) => JSON.parse(d.payload).id),
      [id(3), id(5), id(7)],
    );

    // A metric and one log line per poison record.
    const metric = await r.metrics.registry.getSingleMetricAsString('runtime_poison_records_total');
    t.regex(
      metric,
      new RegExp(`runtime_poison_records_total\\{[^}]*topic="${r.topic.replace(/\./g, '\\.')}"[^}]*cause="commit"[^}]*\\} 3`),
    );
    const logged = r.lines.filter((l) => l.msg === 'record dead-lettered');
    t.is(logged.length, 3);
    for (const [i, l] of logged.entries()) {
      t.like(l.obj, { topic: r.topic, key: 'k', cause: 'commit', reason: dead[i].reason });
      t.is(`${l.obj.topic}/${l.obj.partition}@${l.obj.offset}`, dead[i].source);
    }
    t.is(r.lines.filter((l) => /retrying from the store/.test(l.msg ?? '')).length, 0, 'no backoff: the database answered every time');
    t.true(
      r.lines.some((l) => /in halves/.test(l.msg ?? '')),
      'a batch of valid and poison records was narrowed down',
    );
    t.false(
      r.lines.some((l) => /records gone from the log/.test(l.msg ?? '')),
      'every retried half rebuilt its actors from where replay starts',
    );
  });
}

for (const [name, makeBus] of buses)
  test(`${name}: a commit that fails for the moment (a lock not granted) is retried after growing pauses, not in a spin, and dead-letters nothing`, async (t) => {
    const db = await freshDatabase();
    const bus = makeBus();
    const prefix = `pt${randomBytes(3).toString('hex')}.`;
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const dbName = (await admin.query('select current_database() as d')).rows[0].d;
    await admin.query(`alter database "${dbName}" set lock_timeout = '150ms'`); // the rig's connections inherit it
    const r = await notesRig(bus, db.url, prefix);
    t.teardown(async () => {
      await admin.end().catch(() => undefined);
      await r.close();
      await bus.close();
      await db.drop();
    });
    t.deepEqual(await r.asker.ask(note(r.topic, 'k', 1)), { n: 1 });

    await admin.query('begin');
    await admin.query(`lock table ${NOTES_TABLE} in access exclusive mode`);
    const pending = settle(r.asker.askMany([2, 3, 4].map((seq) => note(r.topic, 'k', seq))));
    await new Promise((res) => setTimeout(res, 2_500));
    const retries = r.lines.filter((l) => /^commit failed; retrying from the store in \d+ ms$/.test(l.msg ?? ''));
    t.true(retries.length >= 2 && retries.length <= 6, `${retries.length} retries in 2.5 s, with growing pauses`);
    t.deepEqual(
      retries.slice(0, 3).map((l) => l.obj.retryInMs),
      [100, 200, 400].slice(0, Math.min(3, retries.length)),
    );
    t.is(r.lines.filter((l) => /halves|alone/.test(l.msg ?? '')).length, 0, 'not narrowed down: nothing in the records is at fault');
    await admin.query('rollback');

    const done = await pending;
    t.is(done.error, null);
    t.deepEqual(
      (done.value as { n: number }[]).map((x) => x.n),
      [2, 3, 4],
      'applied once the lock is gone',
    );
    t.is((await r.q('select count(*)::int as n from dead_letters'))[0].n, 0, 'nothing dead-lettered');
    t.deepEqual(
      (await r.q(`select seq from ${NOTES_TABLE} order by seq`)).map((x) => x.seq),
      [1, 2, 3, 4],
    );

    // A commit that went through starts the backoff over.
    const seen = r.lines.length;
    await admin.query('begin');
    await admin.query(`lock table ${NOTES_TABLE} in access exclusive mode`);
    const next = settle(r.asker.ask(note(r.topic, 'k', 5)));
    await new Promise((res) => setTimeout(res, 600));
    await admin.query('rollback');
    t.deepEqual((await next).value, { n: 5 });
    const later = r.lines.slice(seen).filter((l) => /^commit failed; retrying from the store/.test(l.msg ?? ''));
    t.true(later.length >= 1);
    t.is(later[0].obj.retryInMs, 100, 'the first pause again');
    t.is((await r.q('select count(*)::int as n from dead_letters'))[0].n, 0);
  });

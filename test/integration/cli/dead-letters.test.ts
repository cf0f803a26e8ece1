// `ops dead-letters` and `ops replay-dead-letters` (issue 19) as an operator runs them, on
// PostgreSQL and the real Kafka broker: a runtime dead-letters records its table refuses (a value
// longer than its column); the CLI lists them (filters, limit, JSON); once the column is widened,
// one is replayed by id and the rest with --all: re-sent to their topic and partition with their
// key, applied by the runtime, marked replayed, never replayed twice by accident.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { partitionFor } from '../../../src/runtime/partitioner.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';
import { note, notesRig, NOTES_TABLE } from '../../helpers/notes-kind.ts';
import { runOps } from '../../helpers/ops-cli.ts';

test('list dead letters, replay one by id and the rest with --all once the cause is fixed', async (t) => {
  const db = await freshDatabase();
  const bus = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'ops-dead-letters-test' });
  const prefix = `od${randomBytes(3).toString('hex')}.`;
  const r = await notesRig(bus, db.url, prefix);
  t.teardown(async () => {
    await r.close();
    await bus.close();
    await db.drop();
  });
  const env = { DATABASE_URL: db.url, TOPIC_PREFIX: prefix, APP_ENV: 'development' };
  const withKafka = { ...env, KAFKA_BROKERS };

  const long = 'y'.repeat(40);
  const outcomes = await Promise.all(
    [note(r.topic, 'k', 1), note(r.topic, 'k', 2, long, 'cmd-2'), note(r.topic, 'k', 3), note(r.topic, 'j', 4, `${long}j`)].map((s) =>
      r.asker.ask(s).then(
        () => 'ok',
        (e) => String(e.message),
      ),
    ),
  );
  t.deepEqual(
    outcomes.map((o) => o.split(':')[0]),
    ['ok', 'commit failed', 'ok', 'commit failed'],
  );
  await r.store.deadLetter({ source: 'webhook:sig1:0', reason: 'undecodable event', payload: 'AAAA' });

  // Listing: JSON on stdout, filtered by topic or source, limited.
  const all = await runOps(['dead-letters'], env);
  t.is(all.code, 0, all.stderr);
  t.like(all.json, { count: 3, total: 3 });
  const byTopic = await runOps(['dead-letters', '--topic', 'notes'], env);
  t.is(byTopic.code, 0, byTopic.stderr);
  t.is(byTopic.json.count, 2);
  const [d2, d4] = byTopic.json.dead_letters;
  t.like(d2, { topic: r.topic, partition: partitionFor('k', 3), key: 'k', replayed_at: null });
  t.regex(d2.reason, /^commit failed: value too long for type character varying\(16\)/);
  t.is(d2.source, `${r.topic}/${d2.partition}@${d2.offset}`);
  t.deepEqual(JSON.parse(d2.payload).cmd, { v: long, seq: 2 });
  t.like(d4, { key: 'j', partition: partitionFor('j', 3) });
  const webhook = await runOps(['dead-letters', '--source', 'webhook:'], env);
  t.is(webhook.json.count, 1);
  t.like(webhook.json.dead_letters[0], { source: 'webhook:sig1:0', topic: null, key: null, payload: 'AAAA' });
  const limited = await runOps(['dead-letters', '--topic', 'notes', '--limit', '1'], env);
  t.like(limited.json, { count: 1, total: 2 });
  t.is(limited.json.dead_letters[0].id, d2.id);
  t.is((await runOps(['dead-letters', '--limit', '0'], env)).code, 2);
  t.is((await runOps(['dead-letters', '--limit', 'x'], env)).code, 2);

  // Replays refused: neither --id nor --all, a webhook dead letter, an unknown id, no Kafka.
  t.is((await runOps(['replay-dead-letters'], withKafka)).code, 2);
  const wh = await runOps(['replay-dead-letters', '--id', webhook.json.dead_letters[0].id], withKafka);
  t.is(wh.code, 2);
  t.regex(wh.stderr, /reconcile/);
  t.is((await runOps(['replay-dead-letters', '--id', '999999'], withKafka)).code, 2);
  t.is((await runOps(['replay-dead-letters', '--all'], env)).code, 2, 'KAFKA_BROKERS is required');

  // The cause is fixed; replay one by id: re-sent with its key, applied by the runtime.
  await r.q(`alter table ${NOTES_TABLE} alter column v type varchar(64)`);
  const one = await runOps(['replay-dead-letters', '--id', d2.id], withKafka);
  t.is(one.code, 0, one.stderr);
  t.like(one.json, { status: 'done', skipped: [] });
  t.deepEqual(one.json.replayed, [{ id: d2.id, source: d2.source, topic: r.topic, key: 'k' }]);
  const until = async (sql: string, want: unknown) => {
    let got: unknown;
    for (let i = 0; i < 100; i++) {
      got = (await r.q(sql)).map((x) => Object.values(x).join(','));
      if (JSON.stringify(got) === JSON.stringify(want)) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    t.deepEqual(got, want);
  };
  await until(`select key, seq from ${NOTES_TABLE} order by seq`, ['k,1', 'k,2', 'k,3']);
  const again = await runOps(['replay-dead-letters', '--id', d2.id], withKafka);
  t.is(again.code, 2, 'already replayed');
  t.regex(again.stderr, /--force/);

  // --all: what is still pending in the topic (the webhook one is not selected).
  const rest = await runOps(['replay-dead-letters', '--all', '--topic', 'notes'], withKafka);
  t.is(rest.code, 0, rest.stderr);
  t.deepEqual(
    rest.json.replayed.map((x: any) => x.id),
    [d4.id],
  );
  await until(`select key, seq from ${NOTES_TABLE} order by seq`, ['k,1', 'k,2', 'k,3', 'j,4']);
  const pending = await runOps(['dead-letters', '--topic', 'notes', '--pending'], env);
  t.is(pending.json.count, 0);
  const listed = await runOps(['dead-letters', '--topic', 'notes'], env);
  t.true(listed.json.dead_letters.every((d: any) => d.replayed_at !== null));
  t.is((await r.q('select count(*)::int as n from dead_letters'))[0].n, 3, 'the rows stay; nothing dead-lettered again');
  // The actors counted the replayed commands as new ones (k: 1, 3, then 2).
  t.deepEqual(await r.asker.ask(note(r.topic, 'k', 5)), { n: 4 });
  // A second --all has nothing left to do.
  const none = await runOps(['replay-dead-letters', '--all', '--topic', 'notes'], withKafka);
  t.like(none.json, { status: 'done', replayed: [] });
});

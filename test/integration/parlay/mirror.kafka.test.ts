// The fixture deliveries through the real Kafka broker and PostgreSQL: one node, two nodes of one
// consumer group, and a node SIGKILLed between consuming and committing (and after committing).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { testNode, KAFKA_BROKERS, JWT_SECRET, WEBHOOK_SECRET } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { assertFinalState, deliver, redeliverAll, runFixtureScenario } from '../../helpers/scenario.ts';
import { startProcessNode } from '../../helpers/process-node.ts';

const kafka = { KAFKA_BROKERS };

test('fixtures through Kafka on PostgreSQL', async (t) => {
  const db = await freshDatabase();
  const node = await testNode({ ...kafka, DATABASE_URL: db.url });
  t.teardown(async () => {
    await node.close();
    await db.drop();
  });
  await runFixtureScenario(t, node.url);
  await redeliverAll(t, node.url);
});

test('two nodes of one consumer group: either front door serves any delivery', async (t) => {
  const db = await freshDatabase();
  const shared = { ...kafka, DATABASE_URL: db.url, TOPIC_PREFIX: `t${randomBytes(4).toString('hex')}.` };
  const [a, b] = await Promise.all([testNode({ ...shared, NODE_ID: 'node-a' }), testNode({ ...shared, NODE_ID: 'node-b' })]);
  t.teardown(async () => {
    await a.close();
    await b.close();
    await db.drop();
  });
  const order = ['01', '02', '03', '04', '05', '06', '08'];
  for (const [i, f] of order.entries()) {
    const r = await deliver((i % 2 ? a : b).url, f);
    t.is(r.status, 200, `${f}: ${JSON.stringify(r.body)}`);
  }
  t.is((await deliver(a.url, '07')).status, 200);
  await assertFinalState(t, a.url);
  await assertFinalState(t, b.url);
});

for (const point of ['before-commit:2', 'after-commit:2']) {
  test(`a node SIGKILLed ${point.startsWith('before') ? 'between consuming and committing' : 'after committing, before answering'} loses and duplicates nothing`, async (t) => {
    const db = await freshDatabase();
    const env = {
      ...kafka,
      DATABASE_URL: db.url,
      TOPIC_PREFIX: `t${randomBytes(4).toString('hex')}.`,
      TOPIC_PARTITIONS: '4',
      PLATFORM_JWT_SECRET: JWT_SECRET,
      PARLAY_WEBHOOK_AUTH_SECRET: WEBHOOK_SECRET,
      ASK_TIMEOUT_MS: '15000',
    };
    t.teardown(() => db.drop());
    const doomed = await startProcessNode({ ...env, NODE_ID: 'doomed', RUNTIME_CRASH_POINT: point });
    const order = ['01', '02', '03', '04', '05', '06', '08', '07'];
    const pending = [...order];
    let crashed = false;
    while (pending.length) {
      const f = pending[0];
      try {
        const r = await deliver(doomed.url, f);
        if (f === '07' && r.status === 503) {
          pending.shift();
          continue;
        } // retried at the end, as the provider does
        t.is(r.status, 200, `${f}: ${JSON.stringify(r.body)}`);
        pending.shift();
      } catch {
        crashed = true; // the node died under this delivery: the provider will retry it
        break;
      }
    }
    await doomed.exited;
    t.true(crashed, `the crash point was reached:\n${doomed.output().slice(-2000)}`);
    const heir = await startProcessNode({ ...env, NODE_ID: 'heir' });
    t.teardown(() => heir.kill());
    for (const f of [...pending, '07']) {
      let r = await deliver(heir.url, f);
      for (let i = 0; i < 20 && r.status === 503; i++) {
        await new Promise((res) => setTimeout(res, 500));
        r = await deliver(heir.url, f);
      }
      t.is(r.status, 200, `${f}: ${JSON.stringify(r.body)}`);
    }
    await assertFinalState(t, heir.url);
    await redeliverAll(t, heir.url);
    // kafkajs's negative timer warning is not printed (src/main.ts); nothing else warns either.
    t.false(/Warning:/.test(heir.output()), heir.output().slice(-2000));
  });
}

// The fixture deliveries through the real Kafka broker and PostgreSQL: one node, two nodes of one
// consumer group, and a node SIGKILLed between consuming and committing (and after committing).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { testNode, KAFKA_BROKERS, JWT_SECRET, WEBHOOK_SECRET } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { assertFinalState, deliver, redeliverAll, runFixtureScenario } from '../../helpers/scenario.ts';
import { startProcessNode } from '../../helpers/process-node.ts';
import { Kafka, logLevel } from 'kafkajs';
import { TOPICS } from '../../../topics/names.ts';
import { PACKED_CREATION } from '../../../topics/parlay-events.ts';

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

/** Every command of the bulk records on a topic, as sent (a creation packed or as an object). */
async function bulkCommandsOn(topic: string): Promise<unknown[]> {
  const kafka = new Kafka({ brokers: KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  let left = offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0);
  const consumer = kafka.consumer({ groupId: `t-wire-${randomBytes(4).toString('hex')}` });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  const got: unknown[] = [];
  await new Promise<void>((resolve, reject) => {
    const stop = setTimeout(() => reject(new Error(`${left} records of ${topic} not read`)), 20_000);
    if (!left) resolve();
    void consumer.run({
      eachMessage: async ({ message }) => {
        const v = JSON.parse(message.value!.toString());
        for (const part of v.bulk ?? []) got.push(part.cmd);
        if (--left === 0) {
          clearTimeout(stop);
          resolve();
        }
      },
    });
  }).finally(() => consumer.disconnect());
  return got;
}

test('a rolling upgrade: a node sending creations packed and one sending them as objects serve one cluster', async (t) => {
  const db = await freshDatabase();
  const prefix = `t${randomBytes(4).toString('hex')}.`;
  const shared = { ...kafka, DATABASE_URL: db.url, TOPIC_PREFIX: prefix };
  const [packs, plain] = await Promise.all([
    testNode({ ...shared, NODE_ID: 'node-new' }), // the default: packed
    testNode({ ...shared, NODE_ID: 'node-old', KAFKA_PACKED_EVENTS: '0' }),
  ]);
  t.teardown(async () => {
    await packs.close();
    await plain.close();
    await db.drop();
  });
  for (const [f, node] of [
    ['01', plain],
    ['02', plain],
    ['03', packs], // its creation goes packed
    ['04', plain],
    ['05', packs],
    ['06', plain],
    ['08', plain], // its creation goes as an object
  ] as const) {
    const r = await deliver(node.url, f);
    t.is(r.status, 200, `${f}: ${JSON.stringify(r.body)}`);
  }
  t.is((await deliver(packs.url, '07')).status, 200);
  await assertFinalState(t, packs.url);
  await assertFinalState(t, plain.url);
  const cmds = await bulkCommandsOn(prefix + TOPICS.parlayEvents);
  const packed = cmds.filter((c) => Array.isArray(c) && c[0] === PACKED_CREATION);
  const objects = cmds.filter((c) => (c as { type?: string }).type === 'ParlayCreated');
  t.true(packed.length >= 1, JSON.stringify(cmds).slice(0, 400));
  t.true(objects.length >= 1, JSON.stringify(cmds).slice(0, 400));
  t.false(
    cmds.some((c) => Array.isArray(c) && c[0] !== PACKED_CREATION),
    'only creations are packed',
  );
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

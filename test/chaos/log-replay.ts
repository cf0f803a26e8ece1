// Determinism check: read every command topic of a cluster run back from Kafka, in partition
// order, and feed the same records to one fresh node on the in-process bus. Its read models must
// equal the cluster's.
import { Kafka, logLevel } from 'kafkajs';
import { fixKafkajsRequestQueue } from '../../src/runtime/kafka-request-queue.ts';
import pg from 'pg';
import { MemoryBus } from '../../src/runtime/memory-bus.ts';
import { TOPICS } from '../../topics/names.ts';
import { freshDatabase } from '../helpers/db.ts';
import { testNode } from '../helpers/node.ts';

fixKafkajsRequestQueue();

export async function readTopic(
  brokers: string,
  topic: string,
): Promise<{ partition: number; key: string; value: string; headers: Record<string, string> }[][]> {
  const kafka = new Kafka({ brokers: [brokers], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const byPartition: { partition: number; key: string; value: string; headers: Record<string, string> }[][] = ends.map(() => []);
  const want = new Map(ends.map((e) => [e.partition, BigInt(e.high)]));
  const total = [...want.values()].reduce((a, b) => a + b, 0n);
  if (total === 0n) return byPartition;
  const consumer = kafka.consumer({ groupId: `replay-${Date.now()}-${Math.random()}` });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let got = 0n;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`reading ${topic}: ${got}/${total}`)), 60_000);
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        if (BigInt(message.offset) >= want.get(partition)!) return;
        byPartition[partition].push({ partition, key: message.key!.toString(), value: message.value!.toString(), headers: {} });
        if (++got >= total) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  return byPartition;
}

export async function replayAndDump(
  brokers: string,
  prefix: string,
  partitions: number,
  dump: (url: string) => Promise<string>,
): Promise<string> {
  const bus = new MemoryBus(partitions);
  const topics = [TOPICS.parlayEvents, TOPICS.clobCommands, TOPICS.walletCommands].map((t) => prefix + t);
  await bus.ensureTopics(topics.map((topic) => ({ topic, partitions })));
  let records = 0;
  for (const topic of topics) {
    const parts = await readTopic(brokers, topic);
    for (const p of parts) {
      await bus.send(
        topic,
        p.map((r) => ({ key: r.key, value: r.value })),
      );
      records += p.length;
    }
  }
  const db = await freshDatabase('replay');
  const node = await testNode(
    { DATABASE_URL: db.url, TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: String(partitions), NODE_ID: 'replayer', CLOB_BOOK_CLOCK: '0' },
    { bus },
  );
  // Wait until every logged record is consumed (the replay's own outbox adds only duplicates).
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  for (let i = 0; i < 600; i++) {
    const [{ n }] = (await c.query(`select coalesce(sum(next_offset), 0)::int as n from consumer_offsets where topic = any($1)`, [topics]))
      .rows;
    if (n >= records) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 500));
  await c.end();
  // A graceful stop saves every changed actor (the in-process bus checkpoints its snapshots and
  // journals the commands in between): then the snapshots are the actors' whole state.
  await node.close();
  const out = await dump(db.url);
  await bus.close();
  await db.drop();
  return out;
}

import { freshDatabase } from '../test/helpers/db.ts';
import { startProcessNode, type ProcessNode } from '../test/helpers/process-node.ts';
import { cpuMeter, pidsOf } from './cpu.ts';
const kafka = process.env.KAFKA_BROKERS!;
const db = await freshDatabase('idle');
const prefix = `idle${Date.now()}.`;
const nodes: ProcessNode[] = [];
for (const id of ['idle-a', 'idle-b'])
  nodes.push(await startProcessNode({ DATABASE_URL: db.url, PLATFORM_JWT_SECRET: 's', PARLAY_WEBHOOK_AUTH_SECRET: 'w', CLOB_JWT_SECRET: 'c', CLOB_INTERNAL_TOKEN: 'i', TOPIC_PARTITIONS: '12', LOG_LEVEL: 'warn', NODE_ID: id, TOPIC_PREFIX: prefix, KAFKA_BROKERS: kafka }, 120_000));
await new Promise((r) => setTimeout(r, 8_000));
const m = cpuMeter({ nodes: () => nodes.map((n) => n.child.pid!), broker: () => pidsOf(['-f', 'kafka.Kafka']), pg: () => pidsOf(['-x', 'postgres']) });
await new Promise((r) => setTimeout(r, 10_000));
console.log(m.stop());
for (const n of nodes) await n.kill('SIGTERM');
await db.drop();

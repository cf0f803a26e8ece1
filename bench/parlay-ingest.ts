// Benchmark (not a test): webhook → queryable parlay, events/s, on PostgreSQL. The service runs as
// its own process (`src/main.ts`), as in production, so the load generator does not share its
// event loop (SERVICE_NODE_OPTIONS is handed to it, e.g. `--cpu-prof` to profile it).
// Usage: npx tsx bench/parlay-ingest.ts [events=20000] [txPerDelivery=250] [concurrency=8]
//   KAFKA_BROKERS=127.0.0.1:19092 to go through the real broker instead of the in-process bus.
import { latencyPlot } from './plot.ts';
import pg from 'pg';
import { freshDatabase } from '../test/helpers/db.ts';
import { startProcessNode } from '../test/helpers/process-node.ts';
import { deliverAll, makeDeliveries } from './webhook-load.ts';
import { cpuMeter, pidsOf } from './cpu.ts';
import { exitOnSignals } from '../test/helpers/children.ts';
exitOnSignals(); // stopped by a signal, a bench takes its service nodes with it

const [events = 20_000, perDelivery = 250, concurrency = 8] = process.argv.slice(2).map(Number);
const db = await freshDatabase('bench');
const kafka = process.env.KAFKA_BROKERS;
const node = await startProcessNode({
  DATABASE_URL: db.url,
  PLATFORM_JWT_SECRET: 's',
  PARLAY_WEBHOOK_AUTH_SECRET: 'w',
  CLOB_JWT_SECRET: 'c',
  CLOB_INTERNAL_TOKEN: 'i',
  TOPIC_PREFIX: `b${Date.now()}.`,
  TOPIC_PARTITIONS: process.env.TOPIC_PARTITIONS ?? '12',
  NODE_ID: 'bench',
  LOG_LEVEL: 'warn',
  ...(kafka ? { KAFKA_BROKERS: kafka } : {}),
  ...(process.env.SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS } : {}),
});
const deliveries = makeDeliveries(events, perDelivery);
const meter = cpuMeter({ service: () => [node.child.pid!], pg: () => pidsOf(['-x', 'postgres']) });
const started = performance.now();
const latencies = await deliverAll(`${node.url}/api/parlays/webhooks/indexer/`, deliveries, concurrency);
const secs = (performance.now() - started) / 1000;
const measured = meter.stop();
const cpu = measured.used;
// The service's memory at the end: live actors and the V8 heap in use (its own /metrics).
const metricsText = await (await fetch(`${node.url}/metrics`)).text();
const metric = (re: RegExp) => [...metricsText.matchAll(re)].reduce((s, m) => s + Number(m[1]), 0);
const liveActors = metric(/^runtime_actors\{[^}]*\} (\d+)/gm);
const heapMb = Math.round(metric(/^nodejs_heap_size_used_bytes\{[^}]*\} ([\d.e+]+)/gm) / 2 ** 20);
// Commands per partition batch (each batch is one PostgreSQL commit): fixed costs per commit amortise over these.
const perBatch =
  metric(/^runtime_records_total\{[^}]*topic="[^"]*parlay[^"]*"[^}]*\} (\d+)/gm) /
  Math.max(1, metric(/^runtime_batch_duration_seconds_count\{[^}]*topic="[^"]*parlay[^"]*"[^}]*\} (\d+)/gm));
const c = new pg.Client({ connectionString: db.url });
await c.connect();
const [{ n }] = (await c.query('select count(*)::int as n from parlays')).rows;
// PostgreSQL's own floor on this machine: the same rows per event (a parlay, its 3 legs, the actor's
// snapshot) into copies of the same tables and indexes, generated inside the server — no service,
// no decoding, no network. No ingest path can go faster than this here.
await c.query('create schema floor');
for (const t of ['parlays', 'parlay_legs', 'actor_snapshots']) await c.query(`create table floor.${t} (like public.${t} including all)`);
const f0 = performance.now();
await c.query(
  `insert into floor.parlays (parlay_id, id, user_wallet, stake, combined_probability, potential_payout, actual_payout, status, legs_total, legs_won, legs_lost, legs_resolved, tx_signature, claim_tx_signature, created_at)
  select g, md5(g::text)::uuid, 'Wallet' || lpad((g % 500)::text, 38, 'x'), 10000000, 125000000000, 78400000, 0, 'active', 3, 0, 0, 0, 'sig-' || g, '', now() from generate_series(1, $1::int) g`,
  [events],
);
await c.query(
  `insert into floor.parlay_legs (parlay_id, leg_index, on_chain_market_id, market_address, selected_outcome, probability_at_entry, status)
  select g, i, 1000 + (g + i * 7) % 64, 'Market' || lpad(((g + i * 7) % 64)::text, 38, 'x'), 'YES', 500000, 'pending' from generate_series(1, $1::int) g, generate_series(0, 2) i`,
  [events],
);
await c.query(
  `insert into floor.actor_snapshots (kind, key, state, topic, partition, next_offset, updated_at)
  select 'Parlay', g::text, jsonb_build_object('parlayId', g::text, 'status', 'active', 'legs', jsonb_build_array(0, 0, 0), 'user', 'Wallet' || g), 't', g % 12, g, now() from generate_series(1, $1::int) g`,
  [events],
);
const floorSecs = (performance.now() - f0) / 1000;
await c.query('drop schema floor cascade');
await c.end();
latencies.sort((a, b) => a - b);
const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))].toFixed(1);
console.log('\nwebhook → queryable parlay (PostgreSQL, bus: %s, service in its own process)', kafka ? 'kafka' : 'in-process');
console.table([
  {
    events,
    queryable: n,
    tx_per_delivery: perDelivery,
    concurrency,
    seconds: secs.toFixed(2),
    'events/s': Math.round(events / secs),
    'delivery p50 ms': q(0.5),
    'delivery p99 ms': q(0.99),
    'service CPU µs/event': Math.round((cpu.service * 1e6) / events),
    'PostgreSQL CPU µs/event': Math.round((cpu.pg * 1e6) / events),
    'machine busy': `${Math.round((100 * measured.machineBusy) / (measured.seconds * measured.cores))}%`,
    'commands/commit': Math.round(perBatch),
    'live actors': liveActors,
    'heap used MB': heapMb,
  },
]);
console.log(
  'PostgreSQL alone, the same rows generated in the server (one statement per table, no service): %s s, %s events/s',
  floorSecs.toFixed(2),
  Math.round(events / floorSecs).toLocaleString(),
);
// The goal (20,000 events/s) as hardware: the cores these measured costs per event would need.
const goal = 20_000;
const coresFor = (secs: number) => (secs / events) * goal;
console.log(
  'at these costs, %s events/s needs about %s cores busy: service %s, PostgreSQL %s, the rest of the machine %s (this machine: %s cores)',
  goal.toLocaleString(),
  coresFor(measured.machineBusy).toFixed(1),
  coresFor(cpu.service).toFixed(1),
  coresFor(cpu.pg).toFixed(1),
  coresFor(Math.max(0, measured.machineBusy - cpu.service - cpu.pg)).toFixed(1),
  measured.cores,
);
console.log(
  'plot: %s',
  await latencyPlot(
    'parlay-ingest',
    `webhook delivery latency: ${perDelivery} transactions per delivery, ${concurrency} in flight, ${Math.round(events / secs)} events/s`,
    [{ label: kafka ? 'Kafka bus' : 'in-process bus', latenciesMs: latencies }],
  ),
);
await node.kill('SIGTERM');
await db.drop();
process.exit(n === events ? 0 : 1);

// Benchmark (not a test): signed orders end to end through a cluster — HTTP front door → Kafka →
// Wallet and MarketBook actors → committed ledger rows — beside the raw Kafka request-reply
// throughput of the same client library on the same broker, and partition takeover after SIGKILL.
// Usage: npx tsx bench/cluster-orders.ts [orders=3000] [nodes=3] [concurrency=48] [markets=12]
//   KAFKA_BROKERS=… to use a running broker; otherwise one is started on 127.0.0.1:19592.
//   RAW_ONLY=1 measures the raw Kafka request-reply alone (window = concurrency) and stops.
//   KEEP_DB=1 keeps the cluster's database for inspection (its URL is printed).
//   PROFILE_NODES=1 writes each node's CPU profile to /tmp/nprof; SERVICE_NODE_OPTIONS is handed to the nodes (e.g. --perf-basic-prof).
import { latencyPlot } from './plot.ts';
import { execFileSync } from 'node:child_process';
import { Keypair } from '@solana/web3.js';
import pg from 'pg';
import { startLocalChain } from '../src/chain/local/index.ts';
import { freshDatabase } from '../test/helpers/db.ts';
import { startProcessNode, type ProcessNode } from '../test/helpers/process-node.ts';
import { OutcomeTokens } from '../test/helpers/chain-market.ts';
import { bearer, createMarket, order } from '../test/helpers/clob.ts';
import { JWT_SECRET, WEBHOOK_SECRET } from '../test/helpers/node.ts';
import { cpuMeter, pidsOf } from './cpu.ts';
import { pct, rawRequestReply } from './kafka-echo.ts';
import { exitOnSignals } from '../test/helpers/children.ts';
exitOnSignals(); // stopped by a signal, a bench takes its service nodes with it

const [nOrders = 3000, nNodes = 3, concurrency = 48, nMarkets = 12] = process.argv.slice(2).map(Number);
const root = new URL('..', import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let brokers = process.env.KAFKA_BROKERS;
let ownBroker = false;
if (!brokers) {
  execFileSync('bash', ['deploy/kafka.sh', 'start', '--port', '19592'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  brokers = '127.0.0.1:19592';
  ownBroker = true;
}
const prefix = `bench${Date.now()}.`;

// 1. Raw Kafka request-reply: the same Asker and KafkaBus, answered by a consumer that echoes.
const raw = await rawRequestReply(brokers, prefix, Math.max(2000, nOrders * 2), concurrency);
if (process.env.RAW_ONLY) {
  // The raw figure alone (e.g. to find where it tops out as the window grows): no cluster.
  console.table([
    {
      path: 'raw Kafka request-reply (echo consumer)',
      window: concurrency,
      'req/s': Math.round(raw.perSec),
      'p50 ms': raw.p50.toFixed(1),
      'p99 ms': raw.p99.toFixed(1),
    },
  ]);
  if (ownBroker) execFileSync('bash', ['deploy/kafka.sh', 'stop', '--port', '19592'], { cwd: root, stdio: 'ignore' });
  process.exit(0);
}

// 2. The cluster.
const db = await freshDatabase('benchcluster');
const chain = await startLocalChain();
const boot = await chain.bootstrap();
const env = {
  KAFKA_BROKERS: brokers,
  DATABASE_URL: db.url,
  TOPIC_PREFIX: prefix,
  TOPIC_PARTITIONS: '12',
  LOG_LEVEL: 'warn',
  PLATFORM_JWT_SECRET: JWT_SECRET,
  PARLAY_WEBHOOK_AUTH_SECRET: WEBHOOK_SECRET,
  CLOB_JWT_SECRET: 'bench-clob',
  CLOB_INTERNAL_TOKEN: 'bench-internal',
  SOLANA_RPC_URL: chain.url,
  CLOB_COLLATERAL_MINT: boot.collateralMint.toBase58(),
  CLOB_DELEGATE: Keypair.generate().publicKey.toBase58(),
  DATABASE_POOL_MAX: '8',
  CLOB_TOKEN_TTL_SECONDS: '3600',
  ...(process.env.PROFILE_NODES ? { NODE_OPTIONS: '--cpu-prof --cpu-prof-dir=/tmp/nprof' } : {}),
  ...(process.env.SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS } : {}),
};
const nodes: ProcessNode[] = [];
for (let i = 0; i < nNodes; i++) nodes.push(await startProcessNode({ ...env, NODE_ID: `bench-${i + 1}` }));
const markets: { yes: string; no: string }[] = [];
const wallets = Array.from({ length: 24 }, () => Keypair.generate());
const mintsList: OutcomeTokens[] = [];
for (let m = 0; m < nMarkets; m++) {
  const t = await new OutcomeTokens(chain).create();
  mintsList.push(t);
  const mk = await createMarket(nodes[0].url, {
    yes_token_id: t.yes.publicKey.toBase58(),
    no_token_id: t.no.publicKey.toBase58(),
    taker_fee_bps: 0,
    min_size: '1',
  });
  markets.push({ yes: mk.yes_token_id, no: mk.no_token_id });
}
const toks: string[] = [];
for (const w of wallets) {
  await chain.fundWallet(w.publicKey, 10n ** 9n, 10_000_000n * 1_000_000n);
  for (const t of mintsList) {
    await t.give(w.publicKey, t.yes.publicKey, 1_000_000n * 1_000_000n);
    await t.give(w.publicKey, t.no.publicKey, 1_000_000n * 1_000_000n);
  }
  toks.push(await bearer(nodes[0].url, w));
}
// Pre-signed mixed flow (signing is the client's cost, not the service's): both sides of both
// outcomes around the middle, so that a share of orders cross and trade.
let seed = 11;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const bodies = Array.from({ length: nOrders }, (_, i) => {
  const w = Math.floor(rnd() * wallets.length);
  const mk = markets[Math.floor(rnd() * markets.length)];
  const price = (0.3 + Math.floor(rnd() * 40) / 100).toFixed(2);
  const signed = order(wallets[w], rnd() < 0.5 ? mk.yes : mk.no, rnd() < 0.5 ? 'BUY' : 'SELL', price, String(1 + Math.floor(rnd() * 5)), {
    feeRateBps: 0,
    salt: String(5_000_000 + i),
  });
  return { w, body: JSON.stringify({ order: signed, orderType: 'GTC' }) };
});
// Warm every node's path (first asks create topics' consumers, caches, connections).
for (let i = 0; i < nodes.length * 4; i++) {
  const b = bodies.pop()!;
  await fetch(`${nodes[i % nodes.length].url}/v1/order`, {
    method: 'POST',
    headers: { authorization: `Bearer ${toks[b.w]}`, 'content-type': 'application/json' },
    body: b.body,
  }).then((r) => r.arrayBuffer());
}

const lat: number[] = [];
const statuses = new Map<string, number>();
let next = 0;
// CPU per order of each part of the system during the HTTP phase (the broker: every kafka.Kafka on this machine).
const meter = cpuMeter({
  nodes: () => nodes.map((n) => n.child.pid!),
  postgres: () => pidsOf(['-x', 'postgres']),
  broker: () => pidsOf(['-f', 'kafka.Kafka']),
  bench: () => [process.pid],
});
const t0 = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async (_, c) => {
    while (next < bodies.length) {
      const b = bodies[next++];
      const url = nodes[(c + next) % nodes.length].url;
      const s = performance.now();
      const r = await fetch(`${url}/v1/order`, {
        method: 'POST',
        headers: { authorization: `Bearer ${toks[b.w]}`, 'content-type': 'application/json' },
        body: b.body,
      });
      const j: any = await r.json().catch(() => ({}));
      lat.push(performance.now() - s);
      const k = r.status === 200 ? j.status : `${r.status} ${j.code ?? j.error ?? ''}`;
      statuses.set(k, (statuses.get(k) ?? 0) + 1);
    }
  }),
);
const httpSecs = (performance.now() - t0) / 1000;
const cpu = meter.stop();
const c = new pg.Client({ connectionString: db.url });
await c.connect();
const acked = [...statuses].filter(([k]) => !/^\d/.test(k)).reduce((a, [, v]) => a + v, 0);
let onLedger = 0;
for (let i = 0; i < 600; i++) {
  onLedger = (await c.query('select count(*)::int as n from open_orders')).rows[0].n;
  if (onLedger >= acked + nodes.length * 4) break;
  await sleep(50);
}
const e2eSecs = (performance.now() - t0) / 1000;
const [{ n: trades }] = (await c.query('select count(*)::int as n from trades')).rows;

// Where an order's time goes: the nodes' mean ask time per topic and HTTP time (their /metrics).
const sums = new Map<string, { sum: number; count: number }>();
for (const n of nodes) {
  const text = await (await fetch(`${n.url}/metrics`)).text();
  for (const m of text.matchAll(
    /^(asks_duration_seconds|http_request_duration_seconds|runtime_batch_duration_seconds)_(sum|count)\{([^}]*)\} ([\d.e+-]+)$/gm,
  )) {
    const labels = Object.fromEntries([...m[3].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (m[1] === 'http_request_duration_seconds' && !(labels.route === '/v1/order' && labels.method === 'POST')) continue;
    if (m[1] === 'asks_duration_seconds' && labels.outcome !== 'ok') continue;
    const what =
      m[1] === 'asks_duration_seconds'
        ? `ask ${labels.topic.slice(prefix.length)}`
        : m[1] === 'runtime_batch_duration_seconds'
          ? `batch of ${labels.topic.slice(prefix.length)} (one commit)`
          : `POST /v1/order (${labels.status})`;
    const e = sums.get(what) ?? { sum: 0, count: 0 };
    e[m[2] as 'sum' | 'count'] += Number(m[4]);
    sums.set(what, e);
  }
}

// 3. Takeover: SIGKILL one node while orders keep flowing; per orphaned partition, the time until
// another member commits on it.
const victim = nodes[nodes.length - 1];
const owned = (await c.query('select topic, partition from consumer_offsets where owner = $1', ['bench-' + nodes.length])).rows.map(
  (r) => `${r.topic}/${r.partition}`,
);
const killedAt = Date.now();
await victim.kill('SIGKILL');
const orphans = new Set(owned);
const takeover: number[] = [];
let trickle = 0;
while (orphans.size && Date.now() - killedAt < 60_000) {
  // A few orders on every market keep every command partition busy.
  await Promise.all(
    markets.map(async (mk) => {
      const w = wallets[trickle % wallets.length];
      const signed = order(w, mk.yes, 'BUY', '0.05', '1', { feeRateBps: 0, salt: String(9_000_000 + trickle++) });
      await fetch(`${nodes[0].url}/v1/order`, {
        method: 'POST',
        headers: { authorization: `Bearer ${toks[wallets.indexOf(w)]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ order: signed, orderType: 'GTC' }),
      }).then(
        (r) => r.arrayBuffer(),
        () => undefined,
      );
    }),
  );
  const rows = (
    await c.query('select topic, partition, owner, (extract(epoch from updated_at) * 1000)::bigint::text as at from consumer_offsets')
  ).rows;
  for (const r of rows) {
    const k = `${r.topic}/${r.partition}`;
    if (orphans.has(k) && r.owner !== 'bench-' + nodes.length && Number(r.at) > killedAt) {
      takeover.push(Number(r.at) - killedAt);
      orphans.delete(k);
    }
  }
  await sleep(50);
}
await c.end();

console.log(
  `\n${nNodes} nodes, ${nMarkets} markets, 12 partitions per topic, ${concurrency} concurrent clients, one broker, PostgreSQL, ${bodies.length} signed orders`,
);
console.table([
  {
    path: 'raw Kafka request-reply (echo consumer)',
    'req/s': Math.round(raw.perSec),
    'p50 ms': raw.p50.toFixed(1),
    'p99 ms': raw.p99.toFixed(1),
  },
  {
    path: 'POST /v1/order: HTTP → Kafka → wallet + book → answer',
    'req/s': Math.round(bodies.length / httpSecs),
    'p50 ms': pct(lat, 0.5).toFixed(1),
    'p99 ms': pct(lat, 0.99).toFixed(1),
  },
  { path: '… until every acknowledged order is on the ledger', 'req/s': Math.round(acked / e2eSecs), 'p50 ms': '', 'p99 ms': '' },
]);
console.table([
  {
    'orders / raw': (bodies.length / httpSecs / raw.perSec).toFixed(3),
    acknowledged: acked,
    'on ledger': onLedger,
    trades,
    answers: JSON.stringify(Object.fromEntries(statuses)),
  },
]);
const machine = cpu.seconds * cpu.cores;
const cpuAll = Object.values(cpu.used).reduce((a, b) => a + b, 0);
console.table(
  Object.entries(cpu.used)
    .map(([part, secs]) => ({
      'HTTP phase': part,
      'CPU ms / order': ((secs * 1000) / bodies.length).toFixed(2),
      'share of the machine': `${((100 * secs) / machine).toFixed(0)}%`,
    }))
    .concat([
      {
        'HTTP phase': `all (${cpu.cores} cores)`,
        'CPU ms / order': ((cpuAll * 1000) / bodies.length).toFixed(2),
        'share of the machine': `${((100 * cpuAll) / machine).toFixed(0)}%`,
      },
    ]),
);
// The goal (10,000 orders/s) as hardware: the cores these measured costs per order would need.
const perOrder = (secs: number) => secs / bodies.length;
console.log(
  'at these costs, 10,000 orders/s needs about %s cores busy: %s (this machine: %s cores)',
  ((cpuAll * 10_000) / bodies.length).toFixed(0),
  Object.entries(cpu.used)
    .map(([part, secs]) => `${part} ${(perOrder(secs) * 10_000).toFixed(0)}`)
    .join(', '),
  cpu.cores,
);
console.log("where the time of an order goes (the nodes' /metrics after the HTTP phase, warm-up included; means):");
console.table([...sums].map(([what, e]) => ({ what, count: e.count, 'mean ms': e.count ? ((1000 * e.sum) / e.count).toFixed(1) : '–' })));
console.table([
  {
    'partitions orphaned by SIGKILL': owned.length,
    'taken over': takeover.length,
    'p50 ms': pct(takeover, 0.5),
    'max ms': Math.max(0, ...takeover),
  },
]);

console.log(
  'plot: %s',
  await latencyPlot('cluster-orders', `POST /v1/order: ${nNodes} nodes, ${concurrency} clients`, [
    { label: `orders (${Math.round(bodies.length / httpSecs)}/s)`, latenciesMs: lat },
    { label: `raw Kafka request-reply (${Math.round(raw.perSec)}/s)`, latenciesMs: raw.latencies },
  ]),
);

for (const n of nodes.slice(0, -1)) await n.kill('SIGTERM');
await chain.close();
if (process.env.KEEP_DB) console.log(`kept ${db.url}`);
else await db.drop();
if (ownBroker) execFileSync('bash', ['deploy/kafka.sh', 'stop', '--port', '19592'], { cwd: root, stdio: 'ignore' });
process.exit(0);

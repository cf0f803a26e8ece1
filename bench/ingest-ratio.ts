// Benchmark (not a test): webhook ingest against this machine's floor, in ONE run. The same
// deliveries, posted by the same client with the same concurrency, go to
//   1. the floor: bench/ingest-floor-server.ts's bare server at its `write` stage (parse, validate,
//      Anchor-decode, write parlays + legs idempotently, one transaction per delivery);
//   2. the service on the in-process bus with PostgreSQL (src/main.ts, its own process);
//   3. two service nodes on the real Kafka broker (KAFKA_BROKERS set), deliveries alternating;
// and prints events/s, the ratio to the floor, machine CPU per event per process, and for each
// service row a measured delivery's mean time by phase (decode, claim, apply, sync) from the nodes'
// webhook_phase_seconds.
// Usage: npx tsx bench/ingest-ratio.ts [events=100000] [txPerDelivery=250] [concurrency=8]
//   Every row's processes are fresh: the first WARM deliveries (default 160, at most half of them)
//   warm them up, posted with the measured concurrency (WARM_CONCURRENCY to change it), and are not
//   counted. A fresh Kafka node spends 16% of its CPU in V8's optimising compiler 2,000 events
//   in, 11–13.5% after 20,000 (perf, session 53); its CPU per event falls until ~60–80k events;
//   the floor's smaller program warms sooner. WARM=8 WARM_CONCURRENCY=1 is the warm-up of
//   sessions before 53.
//   KAFKA_BROKERS=127.0.0.1:19092 adds the 2-node Kafka row (bash deploy/kafka.sh start);
//   ONLY=memory or ONLY=kafka runs the floor and that one service row;
//   ROUNDS=3 runs every path three times, interleaved (floor, service, floor, service, ...), and
//   reports each path's median round: this machine's speed drifts by ±15% between runs. Each
//   service row's ratio is to the mean of the floors just before and after it (a closing floor
//   ends the run);
//   B_ENV='NAME=value,…' adds, in every round, a second service row of each bus with those settings
//   (e.g. B_ENV=DATABASE_COMMITS_IN_FLIGHT=3, or SERVICE_NODE_OPTIONS-like NODE_OPTIONS=…): an A/B
//   of one setting interleaved with its baseline in the same run, each bracketed by floors; B_ONLY=1
//   leaves the baseline rows out;
//   FLOOR_CLAIMS=1 adds the floor with the service's event-identity claim before its write (beyond
//   the contract: what that guard costs) and each row's ratio to it.
import { availableParallelism, loadavg } from 'node:os';
import pg from 'pg';
import { execFileSync } from 'node:child_process';
import { freshDatabase } from '../test/helpers/db.ts';
import { freePort, startProcessNode, type ProcessNode } from '../test/helpers/process-node.ts';
import { deliverAll, makeDeliveries } from './webhook-load.ts';
import { cpuMeter, kernelShares, perfMark, pidsOf, sharesText } from './cpu.ts';
import { startBareServer } from './bare-server.ts';
import { stackedBars } from './plot.ts';
import { exitOnSignals } from '../test/helpers/children.ts';
import { bEnvOf } from './b-env.ts';
exitOnSignals(); // stopped by a signal, a bench takes its service nodes with it

const [events = 100_000, perDelivery = 250, concurrency = 8] = process.argv.slice(2).map(Number);
const only = process.env.ONLY;
const kafka = only === 'memory' ? undefined : process.env.KAFKA_BROKERS;
const deliveries = makeDeliveries(events, perDelivery);
// Warm-up deliveries, posted before the meter starts (not counted), to every row alike.
const WARM = Math.min(Math.floor(deliveries.length / 2), Number(process.env.WARM ?? 160));
const WARM_CONCURRENCY = Number(process.env.WARM_CONCURRENCY ?? concurrency);
const measured = events - Math.min(events, WARM * perDelivery);
/** B_ENV: the settings of the A/B row ('NAME=value,…'), and its label. */
const bEnv = bEnvOf(process.env.B_ENV);
const bLabel = bEnv ? ` (B: ${process.env.B_ENV})` : '';

interface Row {
  path: string;
  'events/s': number;
  ratio: string;
  'p50 ms': string;
  'p99 ms': string;
  stored: number;
  'µs/event': Record<string, number>;
  /** Per process group, the share of its CPU spent in the kernel (%). */
  kernel: Record<string, number>;
  'machine µs/event': number;
  'WAL B/event': number;
  'FPI/kev': number;
  'transactions/delivery': string;
  /** With FLOOR_CLAIMS: events/s over that round's floor with the identity claim. */
  'ratio to floor + claims'?: string;
  /** Service rows: a measured delivery's mean ms in each phase (the nodes' webhook_phase_seconds). */
  phases?: Record<string, number>;
}

/** The nodes' webhook_phase_seconds sums and counts so far, by phase, added over the nodes. */
async function phasesOf(nodeUrls: string[]): Promise<Map<string, { sum: number; count: number }>> {
  const by = new Map<string, { sum: number; count: number }>();
  for (const url of nodeUrls) {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const m of text.matchAll(/^webhook_phase_seconds_(sum|count)\{[^}]*phase="(\w+)"[^}]*\} (\S+)$/gm)) {
      const p = by.get(m[2]) ?? { sum: 0, count: 0 };
      p[m[1] as 'sum' | 'count'] += Number(m[3]);
      by.set(m[2], p);
    }
  }
  return by;
}

/** PostgreSQL's WAL written so far, cluster-wide (this bench is its only client while it runs). */
const wal = async (url: string) => {
  const [r] = await sql(
    url,
    `select wal_bytes::float8 as bytes, wal_fpi::float8 as fpi,
       (select sum(xact_commit)::float8 from pg_stat_database) as commits from pg_stat_wal`,
  );
  return { bytes: Number(r.bytes), fpi: Number(r.fpi), commits: Number(r.commits) };
};

const q = (l: number[], p: number) => l.sort((a, b) => a - b)[Math.min(l.length - 1, Math.floor(p * l.length))].toFixed(0);

async function sql(url: string, text: string): Promise<any[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

const count = async (url: string): Promise<number> => (await sql(url, 'select count(*)::int as n from parlays'))[0].n;

/** Posts the warm-up deliveries (not counted), then the rest under the meter. */
async function drive(
  path: string,
  urls: string[],
  groups: Record<string, () => number[]>,
  dbUrl: string,
  nodeUrls: string[] = [],
): Promise<Row> {
  await deliverAll(urls, deliveries.slice(0, WARM), WARM_CONCURRENCY);
  // Every row starts from a checkpoint with the disk written back: a checkpoint or the kernel's
  // writeback of the rows before falling inside a row would charge that row alone with it.
  await sql(dbUrl, 'checkpoint');
  execFileSync('sync');
  const wal0 = await wal(dbUrl);
  const phases0 = await phasesOf(nodeUrls);
  const meter = cpuMeter({ ...groups, pg: () => pidsOf(['-x', 'postgres']), client: () => [process.pid] });
  const t0 = performance.now();
  perfMark(path, 'start');
  const lat = await deliverAll(urls, deliveries.slice(WARM), concurrency);
  const secs = (performance.now() - t0) / 1000;
  const m = meter.stop();
  perfMark(path, 'end');
  const wal1 = await wal(dbUrl);
  const phases1 = await phasesOf(nodeUrls);
  const phases: Record<string, number> = {};
  for (const [phase, p] of phases1) {
    const n = p.count - (phases0.get(phase)?.count ?? 0);
    if (n > 0) phases[phase] = Math.round(((p.sum - (phases0.get(phase)?.sum ?? 0)) * 10_000) / n) / 10;
  }
  const us = (s: number) => Math.round((s * 1e6) / measured);
  return {
    path,
    'events/s': Math.round(measured / secs),
    ratio: '',
    'p50 ms': q(lat, 0.5),
    'p99 ms': q(lat, 0.99),
    stored: await count(dbUrl),
    'µs/event': Object.fromEntries(Object.entries(m.used).map(([g, s]) => [g, us(s)])),
    'machine µs/event': us(m.machineBusy),
    kernel: kernelShares(m),
    'WAL B/event': Math.round((wal1.bytes - wal0.bytes) / measured),
    'FPI/kev': Math.round(((wal1.fpi - wal0.fpi) * 1000) / measured),
    // Every transaction committed in the cluster, read-only ones and the relays' polls included.
    'transactions/delivery': ((wal1.commits - wal0.commits) / (deliveries.length - WARM)).toFixed(1),
    ...(nodeUrls.length ? { phases } : {}),
  };
}

const rounds = Math.max(1, Number(process.env.ROUNDS ?? 1));
const all: Row[] = [];

const FLOOR = 'floor (bare server: decode + write)';
const CLAIM_FLOOR = 'floor + identity claims (beyond the contract)';

async function floorRow(stage: 'write' | 'claim' = 'write'): Promise<Row> {
  const db = await freshDatabase('ratio_floor');
  try {
    const port = await freePort();
    const child = await startBareServer('bench/ingest-floor-server.ts', { FLOOR_STAGE: stage, PORT: String(port), DATABASE_URL: db.url });
    const path = stage === 'write' ? FLOOR : CLAIM_FLOOR;
    const row = await drive(path, [`http://127.0.0.1:${port}/`], { server: () => [child.pid!] }, db.url);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    return row;
  } finally {
    await db.drop(); // also when the row failed: no database is left behind
  }
}

const env = (db: string, extra: Record<string, string>) => ({
  DATABASE_URL: db,
  PLATFORM_JWT_SECRET: 's',
  PARLAY_WEBHOOK_AUTH_SECRET: 'w',
  CLOB_JWT_SECRET: 'c',
  CLOB_INTERNAL_TOKEN: 'i',
  TOPIC_PARTITIONS: process.env.TOPIC_PARTITIONS ?? '12',
  LOG_LEVEL: 'warn',
  ...(process.env.SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS } : {}),
  ...extra,
});
const hook = (n: ProcessNode) => `${n.url}/api/parlays/webhooks/indexer/`;

async function memoryRow(b: Record<string, string> = {}, label = ''): Promise<Row> {
  const db = await freshDatabase('ratio_mem');
  try {
    const node = await startProcessNode(env(db.url, { NODE_ID: 'ratio-mem', TOPIC_PREFIX: `r${Date.now()}.`, KAFKA_BROKERS: '', ...b }));
    try {
      return await drive(`service, in-process bus${label}`, [hook(node)], { node: () => [node.child.pid!] }, db.url, [node.url]);
    } finally {
      await node.kill('SIGTERM');
    }
  } finally {
    await db.drop();
  }
}

async function kafkaRow(kafka: string, b: Record<string, string> = {}, label = ''): Promise<Row> {
  const db = await freshDatabase('ratio_kafka');
  const prefix = `rk${Date.now()}.`;
  const nodes: ProcessNode[] = [];
  try {
    for (const id of ['ratio-a', 'ratio-b'])
      nodes.push(await startProcessNode(env(db.url, { NODE_ID: id, TOPIC_PREFIX: prefix, KAFKA_BROKERS: kafka, ...b }), 120_000));
    // Both members own their partitions before the clock starts (the warm-up goes through both).
    await new Promise((r) => setTimeout(r, 5_000));
    return await drive(
      `service, 2 nodes on Kafka${label}`,
      nodes.map(hook),
      { nodes: () => nodes.map((n) => n.child.pid!), broker: () => pidsOf(['-f', 'kafka.Kafka']) },
      db.url,
      nodes.map((n) => n.url),
    );
  } finally {
    for (const n of nodes) await n.kill('SIGTERM');
    await db.drop();
  }
}

// Each service row's ratio is to the mean of the floors measured just before and just after it
// (each round's, and the next round's or a closing one): the machine drifts within minutes, and a
// floor on one side only charged that drift to the ratio.
const floors: Row[] = [];
const pending: { row: Row; round: number }[] = [];
for (let round = 0; round < rounds; round++) {
  const floorOf = await floorRow();
  floors.push(floorOf);
  const these = [floorOf];
  const claimFloor = process.env.FLOOR_CLAIMS ? await floorRow('claim') : null;
  if (claimFloor) these.push(claimFloor);
  // With B_ENV, the baseline and B alternate which goes first from round to round.
  const order = !bEnv ? [false] : process.env.B_ONLY ? [true] : round % 2 ? [true, false] : [false, true];
  for (const b of order) if (only !== 'kafka') these.push(b ? await memoryRow(bEnv!, bLabel) : await memoryRow());
  for (const b of order) if (kafka) these.push(b ? await kafkaRow(kafka, bEnv!, bLabel) : await kafkaRow(kafka));
  floorOf.ratio = '1.00';
  for (const r of these.slice(1)) pending.push({ row: r, round });
  if (claimFloor) for (const r of these) r['ratio to floor + claims'] = (r['events/s'] / claimFloor['events/s']).toFixed(2);
  all.push(...these);
}
floors.push(await floorRow()); // the closing floor: the last round's rows are bracketed too
for (const { row, round } of pending) {
  const bracket = (floors[round]['events/s'] + floors[round + 1]['events/s']) / 2;
  row.ratio = (row['events/s'] / bracket).toFixed(2);
}
console.log('floors, in order (each row between two of them): %s events/s', floors.map((f) => f['events/s']).join(', '));
/** Each path's median round by its ratio to its own round's floor (the floor's: by events/s). */
const rows = [...new Set(all.map((r) => r.path))].map((path) => {
  const list = all.filter((r) => r.path === path).sort((a, b) => Number(a.ratio) - Number(b.ratio) || a['events/s'] - b['events/s']);
  return list[Math.floor(list.length / 2)];
});
if (rounds > 1) {
  console.log('\nevery round:');
  console.table(
    all.map((r) => ({
      path: r.path,
      'events/s': r['events/s'],
      ratio: r.ratio,
      'machine µs/event': r['machine µs/event'],
      'WAL B/event': r['WAL B/event'],
    })),
  );
}
console.log(
  '\nwebhook ingest vs the floor, one run%s: %s events (%s measured), %s tx per delivery, %s in flight; %s cores, load average before: %s',
  rounds > 1 ? ` (median of ${rounds} interleaved rounds)` : '',
  events,
  measured,
  perDelivery,
  concurrency,
  availableParallelism(),
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' '),
);
console.table(
  rows.map((r) => {
    const { 'µs/event': parts, kernel: _, phases: __, ...rest } = r;
    return { ...rest, ...Object.fromEntries(Object.entries(parts).map(([g, v]) => [`${g} µs/ev`, v])) };
  }),
);
for (const r of rows.filter((x) => x.path.startsWith('service')))
  console.log(
    '%s: %s × the floor (goal %s)%s',
    r.path,
    r.ratio,
    r.path.includes('Kafka') ? '≥ 0.6' : '≥ 0.8',
    r['ratio to floor + claims'] ? `; ${r['ratio to floor + claims']} × the floor with identity claims` : '',
  );
// B_ENV: each round's B row over its baseline row of the same bus (they share that round's floors).
if (bEnv && !process.env.B_ONLY)
  for (const bus of ['service, in-process bus', 'service, 2 nodes on Kafka']) {
    const pairs = [...Array(rounds).keys()].flatMap((round) => {
      const of = (path: string) => pending.find((p) => p.round === round && p.row.path === path)?.row;
      const a = of(bus);
      const b = of(bus + bLabel);
      return a && b ? [{ speed: b['events/s'] / a['events/s'], machine: b['machine µs/event'] / a['machine µs/event'] }] : [];
    });
    if (!pairs.length) continue;
    const med = (l: number[]) => l.sort((x, y) => x - y)[Math.floor(l.length / 2)].toFixed(2);
    console.log(
      '%s, B over baseline by round: events/s %s (median %s), machine µs/event %s (median %s)',
      bus,
      pairs.map((p) => p.speed.toFixed(2)).join(' / '),
      med(pairs.map((p) => p.speed)),
      pairs.map((p) => p.machine.toFixed(2)).join(' / '),
      med(pairs.map((p) => p.machine)),
    );
  }
for (const r of rows) console.log("%s: share of each process group's CPU spent in the kernel: %s", r.path, sharesText(r.kernel));
for (const r of rows.filter((x) => x.phases && Object.keys(x.phases).length))
  console.log(
    "%s: a delivery's mean ms by phase (the nodes' webhook_phase_seconds): %s",
    r.path,
    Object.entries(r.phases!)
      .map(([phase, ms]) => `${phase} ${ms}`)
      .join(', '),
  );
console.log(
  'plot: %s',
  await stackedBars(
    'ingest-ratio',
    `webhook ingest: machine µs per event by process (${perDelivery} tx per delivery, ${concurrency} in flight)`,
    rows.flatMap((r) => {
      const parts = Object.entries(r['µs/event']);
      const known = parts.reduce((s, [, v]) => s + v, 0);
      return [
        ...parts.map(([part, value]) => ({ bar: `${r.path}: ${r['events/s']}/s`, part, value })),
        { bar: `${r.path}: ${r['events/s']}/s`, part: 'rest of the machine', value: Math.max(0, r['machine µs/event'] - known) },
      ];
    }),
    { unit: `machine µs per event (${availableParallelism()} cores)` },
  ),
);
process.exit(all.every((r) => r.stored === events) ? 0 : 1);

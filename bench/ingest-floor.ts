// Benchmark (not a test): this machine's floor for webhook ingest — the same deliveries as
// bench/parlay-ingest.ts, posted by the same client to a bare server that does only the least any
// implementation must (receive; + parse, validate and decode; + write the rows), with none of the
// service's runtime (no actors, bus, offsets, snapshots, idempotency). What the service reaches is
// bounded by the `write` row; the goal (20,000 events/s) is compared with it. A last row adds the
// service's event-identity claim before the write (beyond the contract: see the server).
// Usage: npx tsx bench/ingest-floor.ts [events=60000] [txPerDelivery=250] [concurrency=8]
import { stackedBars } from './plot.ts';
import { availableParallelism } from 'node:os';
import pg from 'pg';
import { freshDatabase } from '../test/helpers/db.ts';
import { freePort } from '../test/helpers/process-node.ts';
import { deliverAll, makeDeliveries } from './webhook-load.ts';
import { cpuMeter, pidsOf } from './cpu.ts';
import { startBareServer } from './bare-server.ts';
import { exitOnSignals } from '../test/helpers/children.ts';
exitOnSignals(); // stopped by a signal, a bench takes its service nodes with it

const [events = 60_000, perDelivery = 250, concurrency = 8] = process.argv.slice(2).map(Number);
const deliveries = makeDeliveries(events, perDelivery);
const goal = 20_000;

async function stage(name: 'receive' | 'decode' | 'write' | 'claim') {
  const db = name === 'write' || name === 'claim' ? await freshDatabase('floor') : null;
  const port = await freePort();
  const child = await startBareServer('bench/ingest-floor-server.ts', {
    FLOOR_STAGE: name,
    PORT: String(port),
    ...(db ? { DATABASE_URL: db.url } : {}),
  });
  const url = `http://127.0.0.1:${port}/`;
  await deliverAll(url, deliveries.slice(0, 8), 1); // warm the path (not counted)
  const meter = cpuMeter({ server: () => [child.pid!], pg: () => pidsOf(['-x', 'postgres']), client: () => [process.pid] });
  const t0 = performance.now();
  await deliverAll(url, deliveries.slice(8), concurrency);
  const secs = (performance.now() - t0) / 1000;
  const m = meter.stop();
  const n = events - Math.min(events, 8 * perDelivery);
  let stored: number | string = '–';
  if (db) {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    stored = (await c.query('select count(*)::int as n from parlays')).rows[0].n;
    await c.end();
  }
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await db?.drop();
  const us = (s: number) => Math.round((s * 1e6) / n);
  const busy = m.machineBusy / (m.seconds * m.cores);
  return {
    stage: name,
    events: n,
    'parlays stored (with warm-up)': stored,
    'events/s': Math.round(n / secs),
    'server µs/event': us(m.used.server),
    'PostgreSQL µs/event': us(m.used.pg),
    'client µs/event': us(m.used.client),
    'machine µs/event': us(m.machineBusy),
    'machine busy': `${Math.round(100 * busy)}%`,
    'events/s if the machine were 100% busy': Math.round((m.cores * n) / m.machineBusy),
  };
}

const rows = [];
for (const s of ['receive', 'decode', 'write', 'claim'] as const) rows.push(await stage(s));
console.log(
  '\ningest floor on this machine (%s cores): the same deliveries (%s tx each, %s in flight) to a bare server',
  availableParallelism(),
  perDelivery,
  concurrency,
);
console.table(rows);
const write = rows[2];
console.log(
  'a path that only decodes and writes these rows tops out near %s events/s here (%s µs of machine per event); the goal, %s events/s, needs %s µs per event on %s cores',
  write['events/s if the machine were 100% busy'].toLocaleString(),
  write['machine µs/event'],
  goal.toLocaleString(),
  Math.round((availableParallelism() * 1e6) / goal),
  availableParallelism(),
);
const claim = rows[3];
console.log(
  'the event-identity claim adds %s µs of machine per event (server %s, PostgreSQL %s)',
  claim['machine µs/event'] - write['machine µs/event'],
  claim['server µs/event'] - write['server µs/event'],
  claim['PostgreSQL µs/event'] - write['PostgreSQL µs/event'],
);
const serverSide = write['machine µs/event'] - write['client µs/event'];
console.log(
  'without the load generator (the HTTP client), the rest of the machine: %s µs per event, at most about %s events/s',
  serverSide,
  Math.round((availableParallelism() * 1e6) / serverSide).toLocaleString(),
);
const parts = (r: typeof write) =>
  [
    ['server', r['server µs/event']],
    ['PostgreSQL', r['PostgreSQL µs/event']],
    ['client', r['client µs/event']],
    ['rest of the machine', Math.max(0, r['machine µs/event'] - r['server µs/event'] - r['PostgreSQL µs/event'] - r['client µs/event'])],
  ] as const;
console.log(
  'plot: %s',
  await stackedBars(
    'ingest-floor',
    `ingest floor: machine µs per event by stage (${perDelivery} tx per delivery, ${concurrency} in flight)`,
    rows.flatMap((r) => parts(r).map(([part, value]) => ({ bar: r.stage, part, value }))),
    {
      unit: `machine µs per event (${availableParallelism()} cores)`,
      budget: { value: (availableParallelism() * 1e6) / goal, label: `${goal.toLocaleString()} events/s` },
    },
  ),
);
const all = (r: typeof write) => r['parlays stored (with warm-up)'] === r.events + Math.min(events, 8 * perDelivery);
process.exit(all(write) && all(claim) ? 0 : 1);

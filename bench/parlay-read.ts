// Benchmark (not a test): GET /api/parlays/user/ latency at a fixed request rate with 1M parlays
// stored in PostgreSQL. The service runs as its own process (`src/main.ts`); an even-paced open-loop
// generator drives it. Beside what the generator saw, the node's own view: its answer time for the
// route (p99 as a bucket bound of its http_request_duration_seconds, and how many took over 10 ms)
// and its event-loop delay; on this 2-core machine a request can wait for a core before either
// side times it, and the generator's own stalls count as latency (it measures from when a request
// was due).
// Usage: npx tsx bench/parlay-read.ts [parlays=1000000] [rate=2000] [seconds=20] [wallets=100000]
//   USERS=2000 distinct users polling; PARLAY_READ_CACHE_WALLETS=0 turns the node's read cache off.
// KEEP_DB=1 keeps the loaded database and prints its URL; BENCH_DB_URL=<that URL> measures it again without loading.
import { latencyPlot } from './plot.ts';
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { openLoop } from './open-loop.ts';
import { freshDatabase } from '../test/helpers/db.ts';
import { exitOnSignals, ownChild } from '../test/helpers/children.ts';
exitOnSignals(); // stopped by a signal, a bench takes its service nodes with it

const [parlays = 1_000_000, rate = 2000, seconds = 20, wallets = 100_000] = process.argv.slice(2).map(Number);
const reuse = process.env.BENCH_DB_URL;
const db = reuse ? { url: reuse, drop: async () => undefined } : await freshDatabase('benchread');
const port = 18000 + Math.floor(Math.random() * 1000);
const secret = 'bench-secret';
const svc = ownChild(
  spawn(process.execPath, [...(process.env.SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? []), '--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      APP_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: db.url,
      PLATFORM_JWT_SECRET: secret,
      LOCAL_CHAIN: '0',
      LOG_LEVEL: 'warn',
      NODE_ID: 'bench-read',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  }),
);
const base = `http://127.0.0.1:${port}`;
/** What the last scrape of the node's metrics read besides its buckets (servedBuckets). */
const lastScrape = { loop: '' };
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/healthz`)).ok) break;
  } catch {
    /* starting */
  }
  if (i > 300) throw new Error('service did not start');
  await new Promise((r) => setTimeout(r, 200));
}
const client = new pg.Client({ connectionString: db.url });
await client.connect();
const t0 = performance.now();
// Wallet names are stand-ins for base58 addresses of the same length.
if (!reuse) {
  await client.query(
    `insert into parlays (parlay_id, id, user_wallet, stake, combined_probability, potential_payout, actual_payout, status,
    legs_total, legs_won, legs_lost, legs_resolved, tx_signature, claim_tx_signature, created_at)
  select g, md5(g::text)::uuid, 'Wallet' || lpad((g % $2)::text, 38, 'x'), 10000000, 250000000000, 39200000, 0,
    (array['active','won','lost','claimed'])[1 + g % 4], 2, 0, 0, 0, 'sig' || g, '', now() - (g || ' seconds')::interval
  from generate_series(1, $1::int) g`,
    [parlays, wallets],
  );
  await client.query(
    `insert into parlay_legs (parlay_id, leg_index, on_chain_market_id, market_address, selected_outcome, probability_at_entry, status)
  select g, i, 100 + (g + i) % 500, 'Market' || ((g + i) % 500), case when i = 0 then 'YES' else 'NO' end, 500000, 'pending'
  from generate_series(1, $1::int) g, generate_series(0, 1) i`,
    [parlays],
  );
  // A bulk-loaded table is not at rest until vacuumed (visibility map, hint bits): do it before measuring,
  // or autovacuum does it in the middle of the run.
  await client.query('vacuum (analyze) parlays');
  await client.query('vacuum (analyze) parlay_legs');
  // The load's dirty pages written now, not by a checkpoint in the middle of the run (a run started
  // right after the load read p99 106 ms, the next one on the same database 8.8 ms).
  await client.query('checkpoint');
}
const loadSecs = (performance.now() - t0) / 1000;
await client.end();

// USERS distinct users poll (default 2,000): each node keeps their answers in memory (src/parlay/read-cache.ts);
// USERS=100000 makes nearly every request a first read, answered by PostgreSQL.
const users = Number(process.env.USERS ?? 2000);
const tokens = Array.from({ length: users }, (_, i) =>
  jwt.sign({ sub: `u${i}`, wallet: 'wallet' + String((i * 7919) % wallets).padStart(38, 'x') }, secret, {
    algorithm: 'HS256',
    expiresIn: 3600,
  }),
);
// Open-loop load at an even pace from a light raw-socket generator (bench/open-loop.ts), latency
// measured from each request's scheduled time. The generator's own CPU and event-loop delay are
// reported beside the figures: on a small machine it shares the cores with the service and PostgreSQL.
const requests = tokens.map((tk) =>
  Buffer.from(`GET /api/parlays/user/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${tk}\r\n\r\n`),
);
const connections = Number(process.env.CONNECTIONS ?? 64);
// Warm-up (every user's first request links its wallet; caches fill), then the measured run.
await openLoop({ port, requests, rate, seconds: Math.min(5, seconds), connections });
// Event-loop delays are printed beyond the sampling timer's own interval (an idle loop records the
// interval itself): the generator samples every GEN_LOOP_MS, the node (prom-client) every 10 ms.
const GEN_LOOP_MS = 5;
const loop = monitorEventLoopDelay({ resolution: GEN_LOOP_MS });
loop.enable();
const served0 = await servedBuckets();
const cpu0 = process.cpuUsage();
const r = await openLoop({ port, requests, rate, seconds, connections });
const cpu = process.cpuUsage(cpu0);
loop.disable();
const served = (await servedBuckets()).map(([le, n], i) => [le, n - served0[i][1]] as const);
const nodeLoop = lastScrape.loop;
const { latencies, errors, non2xx } = r;
// The node's own time per request (its http_request_duration_seconds histogram: from the request's
// first middleware to its answer), beside what the generator saw: on this 2-core machine the
// generator, the node and PostgreSQL share the cores, and a request waits for one before either
// side measures it.
const servedTotal = served.at(-1)?.[1] ?? 0;
const servedP99 = served.find(([, n]) => n >= 0.99 * servedTotal)?.[0] ?? Infinity;
const servedOver10 = servedTotal - (served.find(([le]) => le === 0.01)?.[1] ?? 0);
const achieved = (latencies.length + errors + non2xx) / r.seconds;
latencies.sort((a, b) => a - b);
const q = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] : 0).toFixed(2);
const sample = await fetch(`${base}/api/parlays/user/`, { headers: { authorization: `Bearer ${tokens[1]}` } }).then((r) => r.json());
console.log(
  `\nGET /api/parlays/user/ with ${parlays.toLocaleString()} parlays (${(parlays * 2).toLocaleString()} legs) over ${wallets.toLocaleString()} wallets; load ${loadSecs.toFixed(1)} s`,
);
console.table([
  {
    'target rps': rate,
    'achieved rps': Math.round(achieved),
    requests: latencies.length,
    errors,
    non2xx,
    'p50 ms': q(0.5),
    'p90 ms': q(0.9),
    'p99 ms': q(0.99),
    'node p99 ms ≤': servedP99 * 1000,
    'node over 10 ms': servedOver10,
    'node loop delay p99/max ms': nodeLoop,
    'generator CPU %': ((100 * (cpu.user + cpu.system)) / 1e6 / r.seconds).toFixed(0),
    'generator loop delay p99/max ms': `${(loop.percentile(99) / 1e6 - GEN_LOOP_MS).toFixed(1)}/${(loop.max / 1e6 - GEN_LOOP_MS).toFixed(1)}`,
    'max ms': latencies.length ? latencies[latencies.length - 1].toFixed(1) : '0',
    'parlays/response': sample.data.length,
    users,
  },
]);
console.log(
  'plot: %s',
  await latencyPlot('parlay-read', `GET /api/parlays/user/ at ${rate} req/s, ${parlays.toLocaleString()} parlays`, [
    { label: `${Math.round(achieved)} req/s achieved`, latenciesMs: latencies },
  ]),
);
svc.kill('SIGTERM');

/** The node's cumulative counts of GET /api/parlays/user/ answers by upper bound (seconds), from its metrics. */
async function servedBuckets(): Promise<(readonly [number, number])[]> {
  const text = await (await fetch(`${base}/metrics`)).text();
  // The node's event-loop delay since the scrape before (prom-client resets it at every scrape).
  const gauge = (name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  lastScrape.loop = `${(gauge('nodejs_eventloop_lag_p99_seconds') - 10).toFixed(1)}/${(gauge('nodejs_eventloop_lag_max_seconds') - 10).toFixed(1)}`;
  const byLe = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('http_request_duration_seconds_bucket{') || !line.includes('route="/api/parlays/user/"')) continue;
    const le = /le="([^"]+)"/.exec(line)![1];
    const at = le === '+Inf' ? Infinity : Number(le);
    byLe.set(at, (byLe.get(at) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return [...byLe].sort((a, b) => a[0] - b[0]);
}
await new Promise((r) => svc.on('exit', r));
if (process.env.KEEP_DB || reuse) console.log(`kept database ${db.url}`);
else await db.drop();

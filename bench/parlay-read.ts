// Benchmark (not a test): GET /api/parlays/user/ latency at a fixed request rate with 1M parlays
// stored in PostgreSQL. The service runs as its own process (`src/main.ts`); an even-paced open-loop
// generator drives it.
// Usage: npx tsx bench/parlay-read.ts [parlays=1000000] [rate=2000] [seconds=20] [wallets=100000]
// KEEP_DB=1 keeps the loaded database and prints its URL; BENCH_DB_URL=<that URL> measures it again without loading.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { freshDatabase } from '../test/helpers/db.ts';

const [parlays = 1_000_000, rate = 2000, seconds = 20, wallets = 100_000] = process.argv.slice(2).map(Number);
const reuse = process.env.BENCH_DB_URL;
const db = reuse ? { url: reuse, drop: async () => undefined } : await freshDatabase('benchread');
const port = 18000 + Math.floor(Math.random() * 1000);
const secret = 'bench-secret';
const svc = spawn(process.execPath, [...(process.env.SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? []), '--import', 'tsx', 'src/main.ts'], {
  env: { ...process.env, APP_ENV: 'development', PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: db.url, PLATFORM_JWT_SECRET: secret, LOCAL_CHAIN: '0', LOG_LEVEL: 'warn', NODE_ID: 'bench-read' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  try { if ((await fetch(`${base}/healthz`)).ok) break; } catch { /* starting */ }
  if (i > 300) throw new Error('service did not start');
  await new Promise((r) => setTimeout(r, 200));
}
const client = new pg.Client({ connectionString: db.url });
await client.connect();
const t0 = performance.now();
// Wallet names are stand-ins for base58 addresses of the same length.
if (!reuse) {
await client.query(`insert into parlays (parlay_id, id, user_wallet, stake, combined_probability, potential_payout, actual_payout, status,
    legs_total, legs_won, legs_lost, legs_resolved, tx_signature, claim_tx_signature, created_at)
  select g, md5(g::text)::uuid, 'Wallet' || lpad((g % $2)::text, 38, 'x'), 10000000, 250000000000, 39200000, 0,
    (array['active','won','lost','claimed'])[1 + g % 4], 2, 0, 0, 0, 'sig' || g, '', now() - (g || ' seconds')::interval
  from generate_series(1, $1::int) g`, [parlays, wallets]);
await client.query(`insert into parlay_legs (parlay_id, leg_index, on_chain_market_id, market_address, selected_outcome, probability_at_entry, status)
  select g, i, 100 + (g + i) % 500, 'Market' || ((g + i) % 500), case when i = 0 then 'YES' else 'NO' end, 500000, 'pending'
  from generate_series(1, $1::int) g, generate_series(0, 1) i`, [parlays]);
// A bulk-loaded table is not at rest until vacuumed (visibility map, hint bits): do it before measuring,
// or autovacuum does it in the middle of the run.
await client.query('vacuum (analyze) parlays');
await client.query('vacuum (analyze) parlay_legs');
}
const loadSecs = (performance.now() - t0) / 1000;
await client.end();

const tokens = Array.from({ length: 2000 }, (_, i) => jwt.sign({ sub: `u${i}`, wallet: 'wallet' + String((i * 7919) % wallets).padStart(38, 'x') }, secret, { algorithm: 'HS256', expiresIn: 3600 }));
// Open-loop load at an even pace (a request every 1/rate s, not a burst at each second as
// autocannon's rate limit sends), latency measured from each request's scheduled time, so that a
// stall shows up in the percentiles instead of slowing the generator (no coordinated omission).
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let latencies: number[] = [];
let errors = 0;
let non2xx = 0;
let total = 0;
let t0run = 0;
const run = (secs: number) => new Promise<void>((resolve) => {
  total = rate * secs;
  t0run = performance.now();
  let sent = 0;
  let done = 0;
  const finish = () => { if (++done === total) resolve(); };
  const tick = () => {
    const due = Math.min(total, Math.floor(((performance.now() - t0run) / 1000) * rate) + 1);
    for (; sent < due; sent++) {
      const scheduled = t0run + (sent / rate) * 1000;
      const req = http.request({ agent, host: '127.0.0.1', port, path: '/api/parlays/user/', headers: { authorization: `Bearer ${tokens[sent % tokens.length]}` } }, (res) => {
        if (res.statusCode !== 200) non2xx++;
        res.resume();
        res.on('end', () => { const l = performance.now() - scheduled; latencies.push(l); finish(); });
      });
      req.on('error', () => { errors++; finish(); });
      req.end();
    }
    if (sent < total) setTimeout(tick, 1);
  };
  tick();
});
// Warm-up (every user's first request links its wallet; caches fill), then the measured run.
await run(Math.min(5, seconds));
latencies = []; errors = 0; non2xx = 0;
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
await run(seconds);
loop.disable();
const achieved = total / ((performance.now() - t0run) / 1000);
latencies.sort((a, b) => a - b);
const q = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] : 0).toFixed(2);
const sample = await fetch(`${base}/api/parlays/user/`, { headers: { authorization: `Bearer ${tokens[1]}` } }).then((r) => r.json());
console.log(`\nGET /api/parlays/user/ with ${parlays.toLocaleString()} parlays (${(parlays * 2).toLocaleString()} legs) over ${wallets.toLocaleString()} wallets; load ${loadSecs.toFixed(1)} s`);
console.table([{
  'target rps': rate, 'achieved rps': Math.round(achieved), requests: latencies.length, errors, non2xx,
  'p50 ms': q(0.5), 'p90 ms': q(0.9), 'p99 ms': q(0.99), 'generator loop delay p99/max ms': `${(loop.percentile(99) / 1e6).toFixed(1)}/${(loop.max / 1e6).toFixed(1)}`, 'max ms': latencies.length ? latencies[latencies.length - 1].toFixed(1) : '0', 'parlays/response': sample.data.length,
}]);
svc.kill('SIGTERM');
await new Promise((r) => svc.on('exit', r));
if (process.env.KEEP_DB || reuse) console.log(`kept database ${db.url}`); else await db.drop();

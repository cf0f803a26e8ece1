// Benchmark (not a test): 1,000 `market` channel subscribers (docs/ws.md) on one node while orders
// flow at a steady rate. The node runs as its own process (`src/main.ts`) on PostgreSQL with the
// in-process bus, the local chain for collateral; the subscribers are plain `ws` clients in this
// process (they count and time each message, reading only what they need of it).
// The flow: one wallet places a resting BUY of the YES token every 1/rate s at a price cycling over
// 0.01–0.30, each of a size no other order has (so the price_change of its placement names it),
// and cancels the order placed `depth` orders before: a placement and a cancel per step.
// Latency: from the book change (the ledger row's `at`, the commit's clock; and the order's HTTP
// answer at this process) to the message's arrival at each subscriber, for every placement.
// Usage: npx tsx bench/ws-subscribers.ts [subscribers=1000] [rate=20] [seconds=30] [depth=10]
import { Keypair } from '@solana/web3.js';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import WebSocket from 'ws';
import { startLocalChain } from '../src/chain/local/index.ts';
import { freshDatabase } from '../test/helpers/db.ts';
import { startProcessNode } from '../test/helpers/process-node.ts';
import { OutcomeTokens } from '../test/helpers/chain-market.ts';
import { bearer, createMarket, order } from '../test/helpers/clob.ts';
import { JWT_SECRET, WEBHOOK_SECRET } from '../test/helpers/node.ts';
import { cpuMeter, pidsOf } from './cpu.ts';
import { latencyPlot } from './plot.ts';
import { exitOnSignals } from '../test/helpers/children.ts';
exitOnSignals(); // stopped by a signal, a bench takes its service nodes with it

const [nSubs = 1000, rate = 20, seconds = 30, depth = 10] = process.argv.slice(2).map(Number);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const epochNow = () => performance.timeOrigin + performance.now();
const pct = (a: number[], p: number) => {
  if (!a.length) return NaN;
  const s = Float64Array.from(a).sort();
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const rssMiB = (pid: number) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  } catch {
    return NaN;
  }
};

delete process.env.KAFKA_BROKERS; // the in-process bus
const db = await freshDatabase('benchws');
const chain = await startLocalChain();
const boot = await chain.bootstrap();
const node = await startProcessNode({
  DATABASE_URL: db.url,
  LOG_LEVEL: 'warn',
  NODE_ID: 'bench-ws',
  PLATFORM_JWT_SECRET: JWT_SECRET,
  PARLAY_WEBHOOK_AUTH_SECRET: WEBHOOK_SECRET,
  SOLANA_RPC_URL: chain.url,
  CLOB_COLLATERAL_MINT: boot.collateralMint.toBase58(),
  CLOB_DELEGATE: Keypair.generate().publicKey.toBase58(),
  CLOB_TOKEN_TTL_SECONDS: '3600',
  WS_MAX_CONNECTIONS_PER_IP: String(nSubs + 100),
});
const pid = node.child.pid!;
const tokens = await new OutcomeTokens(chain).create();
const market = await createMarket(node.url, {
  yes_token_id: tokens.yes.publicKey.toBase58(),
  no_token_id: tokens.no.publicKey.toBase58(),
  taker_fee_bps: 0,
  min_size: '1',
});
const Y = market.yes_token_id;
const M = market.condition_id;
const maker = Keypair.generate();
await chain.fundWallet(maker.publicKey, 10n ** 9n, 10_000_000n * 1_000_000n);
const tok = await bearer(node.url, maker);
const rssIdle = rssMiB(pid);

// The subscribers: each counts its messages, checks its seqs follow one another, and timestamps
// the placements it sees (the first level of a price_change names the placed order's size).
interface Sub {
  ws: WebSocket;
  n: number;
  last: number;
  gaps: number;
  seen: Map<string, number>;
}
const subs: Sub[] = [];
const SIZE = /"price_changes":\[\{[^}]*"size":"(\d+)"/;
const SEQ = /"seq":(\d+)/;
let measuring = false;
for (let i = 0; i < nSubs; i++) {
  const ws = new WebSocket(`${node.url.replace('http', 'ws')}/ws/market`, { perMessageDeflate: false });
  const s: Sub = { ws, n: 0, last: -1, gaps: 0, seen: new Map() };
  ws.on('message', (d) => {
    const at = epochNow();
    const text = String(d);
    if (text === 'PONG') return;
    const seq = Number(SEQ.exec(text)?.[1]);
    if (text.startsWith('{"event_type":"book"')) {
      s.last = seq;
      return;
    }
    if (s.last >= 0 && seq !== s.last + 1) s.gaps++;
    s.last = seq;
    if (!measuring) return;
    s.n++;
    const m = SIZE.exec(text);
    if (m && m[1] !== '0') s.seen.set(m[1], at);
  });
  ws.on('error', () => undefined);
  await new Promise<void>((r, j) => {
    ws.once('open', () => r());
    ws.once('error', j);
  });
  ws.send(JSON.stringify({ type: 'subscribe', assets_ids: [Y] }));
  subs.push(s);
  if (i % 100 === 99) await sleep(20);
}
const heartbeat = setInterval(() => {
  for (const s of subs) if (s.ws.readyState === WebSocket.OPEN) s.ws.send('PING');
}, 10_000);
while (subs.some((s) => s.last < 0)) await sleep(50);
const rssSubscribed = rssMiB(pid);

// Pre-signed orders (signing is the client's cost): size 100 + i is this order's alone.
const steps = Math.round(rate * seconds);
const bodies = Array.from({ length: steps }, (_, i) =>
  JSON.stringify({
    order: order(maker, Y, 'BUY', (0.01 + (i % 30) / 100).toFixed(2), String(100 + i), { feeRateBps: 0 }),
    orderType: 'GTC',
  }),
);
const post = async (path: string, body: string) => {
  const r = await fetch(`${node.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json' },
    body,
  });
  const j: any = await r.json();
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(j)}`);
  return j;
};

const placed: { id: string; size: string; sentAt: number; answeredAt: number }[] = [];
const rss: number[] = [];
const rssTimer = setInterval(() => rss.push(rssMiB(pid)), 1000);
const meter = cpuMeter({ node: () => [pid], postgres: () => pidsOf(['-x', 'postgres']), bench: () => [process.pid] });
measuring = true;
const t0 = performance.now();
let late = 0;
for (let i = 0; i < steps; i++) {
  const due = t0 + (i * 1000) / rate;
  const wait = due - performance.now();
  if (wait > 0) await sleep(wait);
  else late++;
  const sentAt = epochNow();
  const r = await post('/v1/order', bodies[i]);
  placed.push({ id: r.orderID, size: String(100 + i), sentAt, answeredAt: epochNow() });
  if (i >= depth) await post('/v1/orders/cancel', JSON.stringify({ orderID: placed[i - depth].id }));
}
const flowSecs = (performance.now() - t0) / 1000;
// Let the last messages arrive.
const lastSize = placed[placed.length - 1].size;
for (let i = 0; i < 200 && subs.some((s) => !s.seen.has(lastSize)); i++) await sleep(50);
await sleep(300);
measuring = false;
const secs = (performance.now() - t0) / 1000;
const cpu = meter.stop();
clearInterval(rssTimer);
clearInterval(heartbeat);

// The ledger rows' `at` of the placements.
const c = new pg.Client({ connectionString: db.url });
await c.connect();
const at = new Map<string, number>(
  (
    await c.query(
      "select payload->'order'->>'id' as id, extract(epoch from at) * 1000 as at from ledger_messages where market = $1 and type = 'order_placed'",
      [M],
    )
  ).rows.map((r) => [r.id, Number(r.at)]),
);
const [{ n: rows }] = (await c.query('select count(*)::int as n from ledger_messages where market = $1', [M])).rows;
await c.end();
const metrics = await (await fetch(`${node.url}/metrics`)).text();

const fromLedger: number[] = [];
const fromAnswer: number[] = [];
let missing = 0;
for (const p of placed) {
  const a = at.get(p.id);
  for (const s of subs) {
    const got = s.seen.get(p.size);
    if (got === undefined) {
      missing++;
      continue;
    }
    if (a !== undefined) fromLedger.push(got - a);
    fromAnswer.push(got - p.answeredAt);
  }
}
const delivered = subs.reduce((n, s) => n + s.n, 0);
const gaps = subs.reduce((n, s) => n + s.gaps, 0);
const cpuNode = cpu.used.node;
console.log(
  `\n${nSubs} market subscribers on one node (PostgreSQL, in-process bus); ${steps} placements + ${steps - depth} cancels, target ${rate}/s each, achieved ${(steps / flowSecs).toFixed(1)}/s over ${flowSecs.toFixed(1)} s (${late} steps started late: the order path's pace); machine: ${cpu.cores} cores, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
);
console.table([
  {
    'messages delivered': delivered,
    'messages/s': Math.round(delivered / secs),
    'per subscriber': (delivered / nSubs).toFixed(0),
    'seq gaps': gaps,
    'placements not seen': missing,
    'ledger rows': rows,
  },
]);
console.table([
  {
    from: 'ledger row `at` (commit) → subscriber',
    samples: fromLedger.length,
    'p50 ms': pct(fromLedger, 0.5).toFixed(1),
    'p90 ms': pct(fromLedger, 0.9).toFixed(1),
    'p99 ms': pct(fromLedger, 0.99).toFixed(1),
    'max ms': pct(fromLedger, 1).toFixed(1),
  },
  {
    from: 'HTTP answer of the order → subscriber',
    samples: fromAnswer.length,
    'p50 ms': pct(fromAnswer, 0.5).toFixed(1),
    'p90 ms': pct(fromAnswer, 0.9).toFixed(1),
    'p99 ms': pct(fromAnswer, 0.99).toFixed(1),
    'max ms': pct(fromAnswer, 1).toFixed(1),
  },
]);
console.table([
  {
    'node CPU % of a core': ((100 * cpuNode) / cpu.seconds).toFixed(0),
    'node CPU µs / message delivered': ((cpuNode * 1e6) / Math.max(1, delivered)).toFixed(1),
    'postgres CPU %': ((100 * cpu.used.postgres) / cpu.seconds).toFixed(0),
    'bench (subscribers + orders) CPU %': ((100 * cpu.used.bench) / cpu.seconds).toFixed(0),
    'machine busy %': ((100 * cpu.machineBusy) / (cpu.seconds * cpu.cores)).toFixed(0),
    'node RSS MiB idle / subscribed / max during flow': `${rssIdle.toFixed(0)} / ${rssSubscribed.toFixed(0)} / ${Math.max(...rss).toFixed(0)}`,
  },
]);
console.log((metrics.match(/^ws_(connections|messages_sent_total|dropped_total|resumes_total)\{[^\n]*$/gm) ?? []).join('\n'));
console.log(
  'plot: %s',
  await latencyPlot('ws-subscribers', `${nSubs} market subscribers, ${rate} placements + cancels /s: book change → delivery`, [
    { label: 'from the ledger row `at`', latenciesMs: fromLedger.map((x) => Math.max(0.01, x)) },
    { label: "from the order's HTTP answer", latenciesMs: fromAnswer.map((x) => Math.max(0.01, x)) },
  ]),
);
for (const s of subs) s.ws.terminate();
await node.kill('SIGTERM');
await chain.close();
await db.drop();
process.exit(0);

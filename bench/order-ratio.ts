// Benchmark (not a test): the order path against this machine's floor, in ONE run, on the same
// pre-signed requests, the same client and the same concurrency. The mixed load of issue 15: 60%
// orders that rest, 15% orders that cross, 25% cancels of the client's own resting orders; each
// client drives its own wallet, one request at a time, so a cancel always follows its order.
//   floor    the bare server of bench/order-floor.ts (parse + ed25519, answers a cancel at once)
//            plus one Kafka request-reply (echo) per request, measured alone: what any conforming
//            path must do at the least;
//   embedded one node, the in-process bus and PGlite (`npm start`'s default);
//   cluster  `nodes` nodes on the Kafka broker and PostgreSQL.
// For each: requests/s and its ratio to the floor, p50/p99, machine CPU per request per process
// (the local chain in a process of its own, bench/chain-process.ts; the goal of ≤ 1 ms is on the
// nodes, PostgreSQL, the broker and the chain, the client left out),
// Kafka records per request (counted on the broker), a single client's p50, and for the cluster
// the p99 of an open-loop run at half its rate (connections spread over the nodes), with the
// requests over 50 ms in each of its seconds, its latency by kind of request and its machine CPU
// per request by process (with PERF_MARKS, its window is marked "<path> at half rate" for
// bench/cpu-profile.ts); and what each path's processes spend idle (5 s with no request after the
// warm-up). Usage:
//   npx tsx bench/order-ratio.ts [requests=3000] [concurrency=48] [markets=12] [nodes=3]
//   KAFKA_BROKERS=… to use a running broker; otherwise one is started on 127.0.0.1:19592.
//   ROUNDS=3 measures floor, embedded and cluster three times, interleaved, and shows each path's
//   median round with its ratio to the floor of that round (the machine drifts by 20–30% within
//   minutes: one round's ratio for the same build read 0.33 to 0.61); ONLY=embedded|cluster.
//   B_ENV='NAME=value,…' also runs each path with those settings in every round, against the same
//   floor, taking turns going first, and prints B over its baseline by round and the median.
//   WARM_PER_CLIENT=n (default 40): each client's warm-up requests before the measured run, not
//   counted, the same mixed load as the run (cancels and crossing orders too) and the same number
//   for the floor's bare server. The service's nodes are fresh processes: a run warmed with a few
//   resting orders only had them compiling (V8's optimising tiers and the first compilation of the
//   cancel and fill paths) for ~20% of their CPU in the measured window (perf, session 53).
//   WARM_PER_CLIENT=0 is the warm-up of sessions before 53 (the floor's 20).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Keypair } from '@solana/web3.js';
import { Kafka, logLevel } from 'kafkajs';
import { fixKafkajsRequestQueue } from '../src/runtime/kafka-request-queue.ts';
import { orderHash, orderId } from '../src/clob/signed-order.ts';
import { freshDatabase } from '../test/helpers/db.ts';
import { freePort, startProcessNode, type ProcessNode } from '../test/helpers/process-node.ts';
import { bearer, createMarket, order } from '../test/helpers/clob.ts';
import { JWT_SECRET, WEBHOOK_SECRET } from '../test/helpers/node.ts';
import { cpuMeter, kernelShares, perfMark, pidsOf, sharesText } from './cpu.ts';
import { startBareServer } from './bare-server.ts';
import { pct, rawRequestReply, warmBroker } from './kafka-echo.ts';
import { openLoopInProcess } from './open-loop-process.ts';
import { oneClient } from './one-client.ts';
import { latencyPlot } from './plot.ts';
import { exitOnSignals, ownChild } from '../test/helpers/children.ts';
import type { ChainReady, ChainSetup } from './chain-process.ts';
import { bEnvOf } from './b-env.ts';
exitOnSignals(); // stopped by a signal, a bench takes its service nodes with it
fixKafkajsRequestQueue(); // its admin client, as the nodes' (src/runtime/kafka-request-queue.ts)

const [nRequests = 3000, concurrency = 48, nMarkets = 12, nNodes = 3] = process.argv.slice(2).map(Number);
const root = new URL('..', import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Seconds of the half-rate open loop run before the 10 that are measured. */
const HALF_RATE_WARMUP_S = 2;
/** Seconds with no request, after the warm-up, in which the deployment's own CPU is measured. */
const IDLE_SECONDS = 5;
let brokers = process.env.KAFKA_BROKERS;
const ownBroker = !brokers;
if (!brokers) {
  execFileSync('bash', ['deploy/kafka.sh', 'start', '--port', '19592'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  brokers = '127.0.0.1:19592';
}

// The chain, the outcome tokens and one funded wallet per client (shared by every run), the chain in
// a process of its own (bench/chain-process.ts): its CPU, every settlement's execution, is measured
// apart from the client's (this process), which the goal on machine CPU per request leaves out.
const wallets = Array.from({ length: concurrency }, () => Keypair.generate());
const chainChild = ownChild(
  spawn(process.execPath, ['--import', 'tsx', 'bench/chain-process.ts'], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] }),
);
chainChild.stdin!.write(
  JSON.stringify({ markets: nMarkets, wallets: wallets.map((w) => Array.from(w.secretKey)) } satisfies ChainSetup) + '\n',
);
const chain: ChainReady = JSON.parse(
  await new Promise<string>((resolve, reject) => {
    createInterface({ input: chainChild.stdout! }).once('line', resolve);
    chainChild.once('exit', (code) => reject(new Error(`the chain process exited (${code}) before it was ready`)));
  }),
);
const tokens = chain.tokens;

// The load: per client, its own wallet's requests in order.
interface Req {
  path: string;
  body: string;
}
let seed = 7;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
let salt = 50_000_000;
const price = (lo: number, hi: number) => (lo + Math.floor(rnd() * Math.round((hi - lo) * 100 + 1)) / 100).toFixed(2);
function script(w: Keypair, n: number): Req[] {
  const resting: string[] = [];
  const out: Req[] = [];
  for (let i = 0; i < n; i++) {
    const t = tokens[Math.floor(rnd() * tokens.length)];
    const yes = t.yes;
    const r = rnd();
    if (r < 0.25 && resting.length) {
      const id = resting.splice(Math.floor(rnd() * resting.length), 1)[0];
      out.push({ path: '/v1/orders/cancel', body: JSON.stringify({ orderID: id }) });
      continue;
    }
    const crossing = r >= 0.85;
    const buy = rnd() < 0.5;
    // Resting bids sit in 0.30–0.45 and asks in 0.55–0.70; a crossing order takes the other side.
    const p = crossing ? (buy ? '0.72' : '0.28') : buy ? price(0.3, 0.45) : price(0.55, 0.7);
    const o = order(w, yes, buy ? 'BUY' : 'SELL', p, String(1 + Math.floor(rnd() * 3)), { feeRateBps: 0, salt: String(++salt) });
    if (!crossing) resting.push(orderId(orderHash(o)));
    out.push({ path: '/v1/order', body: JSON.stringify({ order: o, orderType: crossing ? 'FOK' : 'GTC' }) });
  }
  return out;
}
/** A request's kind: a cancel, or an order that rests or crosses (FOK), BUY or SELL. */
function kindOf(q: Req): string {
  if (q.path !== '/v1/order') return 'cancel';
  const b = JSON.parse(q.body) as { order: { side: string }; orderType: string };
  return `${b.orderType === 'FOK' ? 'crossing' : 'resting'} ${b.order.side}`;
}
const perClient = Math.ceil(nRequests / concurrency);
const WARM_PER_CLIENT = Math.max(0, Number(process.env.WARM_PER_CLIENT ?? 40));
const plans = wallets.map((w) => script(w, perClient));
const total = plans.reduce((a, p) => a + p.length, 0);

/** Every client through its own list, one request at a time; latencies and answers. */
async function drive(base: string, auth: (i: number) => Record<string, string>, lists: Req[][]) {
  const lat: number[] = [];
  const codes = new Map<string, number>();
  const t0 = performance.now();
  await Promise.all(
    lists.map(async (list, i) => {
      for (const q of list) {
        const s = performance.now();
        const r = await fetch(base + q.path, { method: 'POST', headers: { 'content-type': 'application/json', ...auth(i) }, body: q.body });
        const j: any = await r.json().catch(() => ({}));
        lat.push(performance.now() - s);
        const k = r.status === 200 ? (j.status ?? (j.canceled ? 'cancel' : 'ok')) : `${r.status} ${j.code ?? j.error ?? ''}`;
        codes.set(k, (codes.get(k) ?? 0) + 1);
      }
    }),
  );
  return { lat, codes, seconds: (performance.now() - t0) / 1000 };
}

/** A request as the bytes a raw keep-alive client writes (bench/open-loop.ts, bench/one-client.ts). */
function rawRequest(q: Req, authorization: string): Buffer {
  const body = Buffer.from(q.body);
  return Buffer.concat([
    Buffer.from(
      `POST ${q.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: ${authorization}\r\nContent-Length: ${body.length}\r\n\r\n`,
    ),
    body,
  ]);
}

// 1. The floor: the bare server on the same requests, then one Kafka request-reply per request.
const warm = await warmBroker(brokers, `ratiowarm${Date.now()}.`, total, concurrency); // not counted
let cores = 0;
const us = (s: number) => (s * 1e6) / total;

async function measureFloor() {
  const floorPort = await freePort();
  const floorServer = await startBareServer('bench/order-floor-server.ts', { PORT: String(floorPort) });
  await drive(
    `http://127.0.0.1:${floorPort}`,
    () => ({}),
    plans.map((p) => p.slice(0, WARM_PER_CLIENT || 20)),
  ); // warm
  const fm = cpuMeter({ server: () => [floorServer.pid!], client: () => [process.pid] });
  const run = await drive(`http://127.0.0.1:${floorPort}`, () => ({}), plans);
  const cpu = fm.stop();
  floorServer.kill('SIGTERM');
  cores = cpu.cores;
  // The cheapest of three measured runs: the least a request-reply costs (one short run's machine
  // time here varied from 250 to 513 µs an ask from one run to the next, the broker already warm).
  const echoes: { perSec: number; machineBusy: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const km = cpuMeter({});
    const r = await rawRequestReply(brokers!, `ratioecho${Date.now()}-${i}.`, total, concurrency);
    echoes.push({ perSec: r.perSec, machineBusy: km.stop().machineBusy });
  }
  const echo = echoes.reduce((a, b) => (b.machineBusy < a.machineBusy ? b : a));
  const machineUs = us(cpu.machineBusy) + us(echo.machineBusy);
  return { run, cpu, echo, echoes, machineUs, rate: Math.min(total / run.seconds, (cores * 1e6) / machineUs) };
}

// 2. The service.
const base = {
  PLATFORM_JWT_SECRET: JWT_SECRET,
  PARLAY_WEBHOOK_AUTH_SECRET: WEBHOOK_SECRET,
  CLOB_JWT_SECRET: 'bench-clob',
  CLOB_INTERNAL_TOKEN: 'bench-internal',
  SOLANA_RPC_URL: chain.url,
  CLOB_COLLATERAL_MINT: chain.collateralMint,
  CLOB_DELEGATE: Keypair.generate().publicKey.toBase58(),
  CLOB_TOKEN_TTL_SECONDS: '3600',
  LOG_LEVEL: 'warn',
  TOPIC_PARTITIONS: '12',
  ...(process.env.SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVICE_NODE_OPTIONS } : {}),
};

const admin = new Kafka({ clientId: 'order-ratio', brokers: [brokers], logLevel: logLevel.NOTHING }).admin();
await admin.connect();
/**
 * Records on the broker per topic of the deployment under `prefix` (the sum of every partition's
 * high watermark): its topics, and its nodes' reply topics (`replies.<prefix><node>`).
 */
async function recordsUnder(prefix: string): Promise<Map<string, number>> {
  const n = new Map<string, number>();
  const ours = (t: string) => t.startsWith(prefix) || t.startsWith(`replies.${prefix}`);
  for (const t of (await admin.listTopics()).filter(ours)) {
    const name = t.startsWith(prefix) ? t.slice(prefix.length) : 'replies.*';
    for (const p of await admin.fetchTopicOffsets(t)) n.set(name, (n.get(name) ?? 0) + Number(p.high) - Number(p.low));
  }
  return n;
}

/** The nodes' clob_order_ledger_reads_total, summed by `why`. */
async function ledgerReads(nodes: ProcessNode[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(['before_ask', 'book_forgets', 'book_filter'].map((w) => [w, 0]));
  for (const nd of nodes) {
    const text = await (await fetch(`${nd.url}/metrics`)).text();
    for (const m of text.matchAll(/^clob_order_ledger_reads_total\{[^}]*why="([a-z_]+)"[^}]*\} (\d+)/gm))
      out.set(m[1], (out.get(m[1]) ?? 0) + Number(m[2]));
  }
  return out;
}

interface Row {
  path: string;
  rate: number;
  p50: number;
  p99: number;
  cpu: Record<string, number>;
  /** Per process group, the share of its CPU spent in the kernel (%). */
  kernel?: Record<string, number>;
  machineUs: number;
  records: number | null;
  /** The front door's ledger reads per request over the measured run, by why (clob_order_ledger_reads_total). */
  ledgerReads?: Record<string, number>;
  /** Kafka records per request by topic */
  recordsByTopic?: Record<string, number>;
  /** One client's p50: raw socket, and through fetch. */
  single: number;
  singleFetch: number;
  halfP99: number | null;
  /** Requests over 50 ms in each second of the half-rate run. */
  halfSlow?: number[] | null;
  /** The half-rate run's latency by kind of request (kindOf). */
  halfByKind?: string[] | null;
  /** The half-rate run's machine per request, by process. */
  halfCpu?: string | null;
  /** The deployment's CPU with no request at all. */
  idleCpu?: string;
  codes: Map<string, number>;
  lat: number[];
}

async function measure(path: string, env: Record<string, string>, n: number, kafka: boolean): Promise<Row> {
  const nodes: ProcessNode[] = [];
  for (let i = 0; i < n; i++) nodes.push(await startProcessNode({ ...env, NODE_ID: `ratio-${i + 1}` }));
  try {
    for (const t of tokens)
      await createMarket(nodes[0].url, {
        yes_token_id: t.yes,
        no_token_id: t.no,
        taker_fee_bps: 0,
        min_size: '1',
      });
    const auth: Record<string, string>[] = [];
    for (const w of wallets) auth.push({ authorization: `Bearer ${await bearer(nodes[0].url, w)}` });
    // Warm-up (not counted), spread over the nodes: each client's first orders, and one resting bid
    // at the bottom of the range and one resting ask at the top in every market, so that the
    // measured run is the steady state of a trader already active in each market: its first BUY in
    // a market (the wallet's first credit grant to that book: two more records) and the node's
    // first balance read and account subscription of each (wallet, token), the collateral's for the
    // bid and the outcome token's for the ask, fall here, not in the run. (Until 2026-11-27 only
    // the bid: a client's first SELL in each market read its token balance in the run, 7% of the
    // embedded node's CPU in a 3,000-request run.)
    const touches = (w: Keypair) =>
      tokens.flatMap((t) =>
        (
          [
            ['BUY', '0.30'],
            ['SELL', '0.70'],
          ] as const
        ).map(([side, p]) => {
          const o = order(w, t.yes, side, p, '1', { feeRateBps: 0, salt: String(++salt) });
          return { path: '/v1/order', body: JSON.stringify({ order: o, orderType: 'GTC' }) };
        }),
      );
    const warm = wallets.map((w) => [...script(w, 4).filter((q) => q.path === '/v1/order'), ...touches(w)]);
    // Client i talks to node i mod n, one request at a time.
    const byNode = (lists: Req[][]) =>
      Promise.all(
        nodes.map((nd, k) =>
          drive(
            nd.url,
            (i) => auth[i * n + k],
            lists.filter((_, i) => i % n === k),
          ),
        ),
      );
    await byNode(warm);
    // The half-rate run below sends each wallet's requests through every node (a request goes to
    // whichever connection is free), so every node takes the same touches of each wallet's tokens
    // first: otherwise that run measures the other nodes' first balance read, account subscription
    // and token-account address of each (wallet, token), not a trader already active (until
    // 2026-12-02 it did: its slow requests were most in its first seconds and fell off after).
    if (n > 1)
      await Promise.all(
        nodes.map((nd, k) =>
          drive(
            nd.url,
            (i) => auth[i],
            wallets.map((w, i) => (i % n === k ? [] : touches(w))),
          ),
        ),
      );
    // The steady state: every client's own mixed load, through the node the run sends it to.
    if (WARM_PER_CLIENT) {
      const mixed = wallets.map((w) => script(w, WARM_PER_CLIENT));
      const warmed = await byNode(mixed);
      const failed = warmed.flatMap((r) => [...r.codes].filter(([c]) => /^5/.test(c)));
      if (failed.length) throw new Error(`warm-up: ${JSON.stringify(failed)}`);
    }
    // What the deployment spends doing nothing (no request for IDLE_SECONDS, after the warm-up):
    // the floor under any rate's CPU (polls, heartbeats, timers).
    // The deployment's processes, as every meter below counts them.
    const deployment = {
      nodes: () => nodes.map((x) => x.child.pid!),
      postgres: () => pidsOf(['-x', 'postgres']),
      broker: () => pidsOf(['-f', 'kafka.Kafka']),
    };
    const idleMeter = cpuMeter(deployment);
    await sleep(IDLE_SECONDS * 1000);
    const ic = idleMeter.stop();
    const idleCpu = `${Object.entries(ic.used)
      .map(([g, v]) => `${g} ${((100 * v) / ic.seconds).toFixed(1)}%`)
      .join(', ')} of a core; machine ${((100 * ic.machineBusy) / ic.seconds).toFixed(1)}%`;
    const before = kafka ? await recordsUnder(env.TOPIC_PREFIX) : new Map<string, number>();
    const readsBefore = await ledgerReads(nodes);
    const meter = cpuMeter({
      ...deployment,
      chain: () => [chainChild.pid!],
      'bench (client)': () => [process.pid],
    });
    perfMark(path, 'start');
    const runs = await byNode(plans);
    const cpu = meter.stop();
    perfMark(path, 'end');
    const seconds = Math.max(...runs.map((r) => r.seconds));
    const lat = runs.flatMap((r) => r.lat);
    const codes = new Map<string, number>();
    for (const r of runs) for (const [k, v] of r.codes) codes.set(k, (codes.get(k) ?? 0) + v);
    const readsAfter = await ledgerReads(nodes);
    const reads = Object.fromEntries(
      [...readsAfter].map(([why, v]) => [why, Number(((v - (readsBefore.get(why) ?? 0)) / total).toFixed(3))]),
    );
    await sleep(1000); // the ledger's and the releases' records of the last requests
    const after = kafka ? await recordsUnder(env.TOPIC_PREFIX) : null;
    // Per topic, per request (the nodes' reply topics together).
    const byTopic = new Map<string, number>();
    for (const [t, v] of after ?? []) byTopic.set(t, (v - (before.get(t) ?? 0)) / total);
    const records = after ? [...byTopic.values()].reduce((a, b) => a + b, 0) * total : null;
    // One client alone, back to back: p50 on a raw keep-alive socket (bench/one-client.ts), and
    // through `fetch` as the load above (undici's own cost per request included).
    const port = Number(new URL(nodes[0].url).port);
    const lone = await oneClient(
      port,
      script(wallets[0], 200).map((q) => rawRequest(q, auth[0].authorization)),
    );
    if ([...lone.statuses.keys()].some((s) => s >= 500)) throw new Error(`one client: ${JSON.stringify([...lone.statuses])}`);
    const single = await drive(nodes[0].url, () => auth[0], [script(wallets[0], 200)]);
    // Open loop at half the rate (the cluster): p99.
    let halfP99: number | null = null;
    let halfSlow: number[] | null = null;
    let halfByKind: string[] | null = null;
    let halfCpu: string | null = null;
    if (kafka) {
      const rate = Math.max(1, Math.round(total / seconds / 2));
      const lists = wallets.map((w) => script(w, Math.ceil((rate * (10 + HALF_RATE_WARMUP_S)) / wallets.length) + 2));
      const reqs = lists.flatMap((l, i) => l.map((q) => rawRequest(q, auth[i].authorization)));
      const kindsOf = lists.flat().map(kindOf);
      // Interleave the wallets so that each one's requests stay in order and spread in time.
      const per = wallets.length;
      const rows = Math.ceil(reqs.length / per);
      const ordered: Buffer[] = [];
      const kinds: string[] = [];
      for (let r = 0; r < rows; r++)
        for (let i = 0; i < per; i++)
          if (reqs[i * rows + r]) {
            ordered.push(reqs[i * rows + r]);
            kinds.push(kindsOf[i * rows + r]);
          }
      // Spread over the nodes as the closed loop above (client i on node i mod n): one node taking
      // every request at half the cluster's rate was that node's own limit, not the cluster's.
      const ports = nodes.map((nd) => Number(new URL(nd.url).port));
      // In a process of its own: this one runs the local chain, which executes every settlement.
      // Its first seconds at the new rate are not counted (as bench/parlay-read.ts warms up): a run
      // started cold had most of its requests over 50 ms in its first 1–2 s (17–191 of ~330 a
      // second) and few after.
      // What the machine spends per request at that rate, by process (the open loop's own process
      // in `rest`): at half the rate a batch, a fetch and a commit carry fewer requests each.
      const halfMeter = cpuMeter({ ...deployment, chain: () => [chainChild.pid!] });
      perfMark(`${path} at half rate`, 'start');
      const ol = await openLoopInProcess({
        port: ports,
        requests: ordered,
        rate,
        seconds: 10,
        connections: concurrency,
        warmupSeconds: HALF_RATE_WARMUP_S,
      });
      const hc = halfMeter.stop();
      perfMark(`${path} at half rate`, 'end');
      const sent = rate * hc.seconds;
      const perReq = (v: number) => Math.round((v * 1e6) / sent);
      const named = Object.values(hc.used).reduce((a, b) => a + b, 0);
      halfCpu = `${rate} requests/s for ${hc.seconds.toFixed(1)} s, machine ${Math.round((100 * hc.machineBusy) / (hc.seconds * hc.cores))}% busy, µs per request: ${Object.entries(
        hc.used,
      )
        .map(([g, v]) => `${g} ${perReq(v)}`)
        .join(
          ', ',
        )}, rest (the open loop's process, its start included) ${perReq(hc.machineBusy - named)}; machine ${perReq(hc.machineBusy)}`;
      halfP99 = pct(ol.latencies, 0.99);
      // Where the slow ones were: requests over 50 ms in each second of the run.
      const slow = Array.from({ length: 10 }, () => 0);
      ol.latencies.forEach((l, i) => {
        if (l > 50) slow[Math.min(9, Math.floor(ol.dueMs[i] / 1000))]++;
      });
      halfSlow = slow;
      // PERF_MARKS: the slow requests' due times (epoch ms, 100 ms buckets) to line up with the nodes' own logs.
      if (process.env.PERF_MARKS) {
        const buckets = new Map<number, number>();
        ol.latencies.forEach((l, i) => {
          if (l > 50) {
            const b = Math.floor((ol.startedAt + ol.dueMs[i]) / 100) * 100;
            buckets.set(b, (buckets.get(b) ?? 0) + 1);
          }
        });
        console.error(`perf-mark half-rate ${Math.round(ol.startedAt)} slow ${[...buckets].map(([b, n]) => `${b}:${n}`).join(' ')}`);
      }
      // Which requests were slow: latency by kind of request.
      const byKind = new Map<string, number[]>();
      ol.latencies.forEach((l, i) => {
        const k = kinds[ol.index[i]];
        if (!byKind.has(k)) byKind.set(k, []);
        byKind.get(k)!.push(l);
      });
      halfByKind = [...byKind]
        .sort((a, b) => a[0].localeCompare(b[0]))
        .map(
          ([k, ls]) =>
            `${k}: ${ls.length}, p50 ${pct(ls, 0.5).toFixed(1)}, p99 ${pct(ls, 0.99).toFixed(1)}, over 50 ms ${ls.filter((l) => l > 50).length}`,
        );
    }
    const machine = cpu.machineBusy;
    return {
      path,
      rate: total / seconds,
      p50: pct(lat, 0.5),
      p99: pct(lat, 0.99),
      cpu: Object.fromEntries(Object.entries(cpu.used).map(([k, v]) => [k, us(v)])),
      kernel: kernelShares(cpu),
      machineUs: us(machine),
      records: records === null ? null : records / total,
      recordsByTopic: Object.fromEntries([...byTopic].filter(([, v]) => v >= 0.005).map(([k, v]) => [k, Number(v.toFixed(2))])),
      single: pct(lone.latencies, 0.5),
      singleFetch: pct(single.lat, 0.5),
      halfP99,
      halfSlow,
      halfByKind,
      halfCpu,
      idleCpu,
      ledgerReads: reads,
      codes,
      lat,
    };
  } finally {
    for (const nd of nodes) await nd.kill('SIGTERM');
  }
}

// ONLY=embedded or ONLY=cluster measures one of them (profiling); the ratio table needs both.
const only = process.env.ONLY;
const skipped = (path: string): Row => ({
  path: `${path} (skipped)`,
  rate: 0,
  p50: 0,
  p99: 0,
  cpu: {},
  machineUs: 0,
  records: null,
  single: 0,
  singleFetch: 0,
  halfP99: null,
  codes: new Map(),
  lat: [0],
});
async function measureEmbedded(extra: Record<string, string> = {}): Promise<Row> {
  if (only === 'cluster') return skipped('embedded');
  const dataDir = mkdtempSync(join(tmpdir(), 'order-ratio-'));
  try {
    return await measure(
      'embedded: 1 node, in-process bus, PGlite',
      { ...base, DATA_DIR: dataDir, TOPIC_PREFIX: 'emb.', KAFKA_BROKERS: '', DATABASE_URL: '', ...extra },
      1,
      false,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true }); // also when the run failed
  }
}

async function measureCluster(extra: Record<string, string> = {}): Promise<Row> {
  if (only === 'embedded') return skipped('cluster');
  const db = await freshDatabase('ratio');
  try {
    return await measure(
      `${nNodes} nodes on Kafka, PostgreSQL`,
      { ...base, KAFKA_BROKERS: brokers!, DATABASE_URL: db.url, TOPIC_PREFIX: `ratio${Date.now()}.`, DATABASE_POOL_MAX: '8', ...extra },
      nNodes,
      true,
    );
  } finally {
    await db.drop(); // a node that fails to start leaves no database behind
  }
}

// ROUNDS=n: floor, embedded and cluster n times, interleaved; each path's median round is shown,
// its ratio to the floor of its own round (this machine's speed drifts by 20–30% within minutes).
const nRounds = Math.max(1, Number(process.env.ROUNDS ?? 1));
// B_ENV='NAME=value,…': in every round each path also runs with those settings (B), right before or
// after its baseline (taking turns from round to round), against the same floor; printed as B's
// requests/s over the baseline's, by round and their median. A 5–10% effect is not resolvable
// between separate runs on this machine.
const bEnv = bEnvOf(process.env.B_ENV);
const rounds: { floor: Awaited<ReturnType<typeof measureFloor>>; embedded: Row; cluster: Row }[] = [];
const bRounds: { embedded: Row; cluster: Row }[] = [];
for (let r = 0; r < nRounds; r++) {
  const floor = await measureFloor();
  const pair = async (measureOf: (extra?: Record<string, string>) => Promise<Row>) => {
    if (!bEnv) return { a: await measureOf(), b: null };
    if (r % 2) {
      const b = await measureOf(bEnv);
      return { a: await measureOf(), b };
    }
    const a = await measureOf();
    return { a, b: await measureOf(bEnv) };
  };
  const embedded = await pair(measureEmbedded);
  const cluster = await pair(measureCluster);
  rounds.push({ floor, embedded: embedded.a, cluster: cluster.a });
  if (embedded.b && cluster.b) bRounds.push({ embedded: embedded.b, cluster: cluster.b });
}
const ratioOf = (r: (typeof rounds)[number], path: 'embedded' | 'cluster') => r[path].rate / r.floor.rate;
const medianRound = (key: (r: (typeof rounds)[number]) => number) => [...rounds].sort((a, b) => key(a) - key(b))[(rounds.length - 1) >> 1];
const floorRound = medianRound((r) => r.floor.rate);
const embeddedRound = medianRound((r) => ratioOf(r, 'embedded'));
const clusterRound = medianRound((r) => ratioOf(r, 'cluster'));
const { run: floorRun, cpu: floorCpu, echo, echoes, machineUs: floorUs, rate: floorRate } = floorRound.floor;
const embedded = embeddedRound.embedded;
const cluster = clusterRound.cluster;
const embeddedFloor = embeddedRound.floor.rate;
const clusterFloor = clusterRound.floor.rate;
await admin.disconnect();

const f0 = (x: number) => Math.round(x).toString();
const f1 = (x: number) => x.toFixed(1);
if (rounds.length > 1) {
  console.log('\nevery round (req/s, ratio to the floor of its round, machine µs/req):');
  rounds.forEach((r, i) =>
    console.log(
      `round ${i + 1}: floor ${f0(r.floor.rate)} ${f0(r.floor.machineUs)} | embedded ${f0(r.embedded.rate)} ${ratioOf(r, 'embedded').toFixed(2)} ${f0(r.embedded.machineUs)} | cluster ${f0(r.cluster.rate)} ${ratioOf(r, 'cluster').toFixed(2)} ${f0(r.cluster.machineUs)}`,
    ),
  );
}
console.log(
  `\norders vs the floor, ${rounds.length > 1 ? `the median of ${rounds.length} rounds (each path's median round, its ratio to that round's floor)` : 'one run'}: ${total} requests (60% resting, 15% crossing FOK, 25% cancels of own resting orders), ${concurrency} clients (one wallet each), ${nMarkets} markets; ${cores} cores`,
);
console.table([
  {
    path: 'floor: bare server (parse + ed25519) + one Kafka request-reply',
    'req/s': f0(floorRate),
    ratio: '1.00',
    'p50 ms': f1(pct(floorRun.lat, 0.5)),
    'p99 ms': f1(pct(floorRun.lat, 0.99)),
    'machine µs/req': f0(floorUs),
    'nodes µs': f0(us(floorCpu.used.server)),
    'pg µs': '',
    'broker µs': '',
    'chain µs': '',
    'bench µs': f0(us(floorCpu.used.client)),
    'records/req': '1 + 1',
    'single p50 ms': '',
    'p99 ms at half rate': '',
  },
  ...(
    [
      [embedded, embeddedFloor],
      [cluster, clusterFloor],
    ] as const
  ).map(([r, floor]) => ({
    path: r.path,
    'req/s': f0(r.rate),
    ratio: (r.rate / floor).toFixed(2),
    'p50 ms': f1(r.p50),
    'p99 ms': f1(r.p99),
    'machine µs/req': f0(r.machineUs),
    'nodes µs': f0(r.cpu.nodes ?? 0),
    'pg µs': f0(r.cpu.postgres ?? 0),
    'broker µs': f0(r.cpu.broker ?? 0),
    'chain µs': f0(r.cpu.chain ?? 0),
    'bench µs': f0(r.cpu['bench (client)'] ?? 0),
    'records/req': r.records === null ? '' : r.records.toFixed(2),
    'single p50 ms': f1(r.single),
    'p99 ms at half rate': r.halfP99 === null ? '' : f1(r.halfP99),
  })),
]);
console.log(
  'floor parts: HTTP + signature %s req/s at %s µs of machine per request; Kafka request-reply %s/s at %s µs (the cheapest of %s µs; warm-up runs at %s µs)',
  f0(total / floorRun.seconds),
  f0(us(floorCpu.machineBusy)),
  f0(echo.perSec),
  f0(us(echo.machineBusy)),
  echoes.map((e) => f0(us(e.machineBusy))).join(', '),
  warm.map(f0).join(', '),
);
for (const [r, floor] of [
  [embedded, embeddedFloor],
  [cluster, clusterFloor],
] as const)
  console.log(
    '%s: %s × the floor (goal ≥ 0.5), %s ms of machine per request without the client (nodes, PostgreSQL, broker, chain: goal ≤ 1; %s ms with it), one client p50 %s ms (%s ms through fetch); answers %s',
    r.path,
    (r.rate / floor).toFixed(2),
    ((r.machineUs - (r.cpu['bench (client)'] ?? 0)) / 1000).toFixed(2),
    (r.machineUs / 1000).toFixed(2),
    f1(r.single),
    f1(r.singleFetch),
    JSON.stringify(Object.fromEntries(r.codes)),
  );
console.log("floor: share of each process group's CPU spent in the kernel: %s", sharesText(kernelShares(floorCpu)));
for (const r of [embedded, cluster])
  if (r.kernel && r.rate) console.log("%s: share of each process group's CPU spent in the kernel: %s", r.path, sharesText(r.kernel));
if (cluster.halfSlow) console.log('half rate (cluster): requests over 50 ms in each second of the run: %s', cluster.halfSlow.join(' '));
for (const r of [embedded, cluster]) if (r.idleCpu) console.log('%s, idle for %d s: %s', r.path, IDLE_SECONDS, r.idleCpu);
if (cluster.halfCpu) console.log('half rate (cluster): %s', cluster.halfCpu);
if (cluster.halfByKind) console.log('half rate (cluster), by kind of request (ms):\n  %s', cluster.halfByKind.join('\n  '));
if (cluster.recordsByTopic) console.log('Kafka records per request by topic (cluster): %s', JSON.stringify(cluster.recordsByTopic));
for (const r of [embedded, cluster])
  if (r.ledgerReads && r.rate) console.log('%s: ledger reads per request (posted before?): %s', r.path, JSON.stringify(r.ledgerReads));
console.log(
  'plot: %s',
  await latencyPlot('order-ratio', `orders vs the floor: ${concurrency} clients, mixed load`, [
    { label: `floor (${f0(floorRate)}/s)`, latenciesMs: floorRun.lat },
    { label: `embedded (${f0(embedded.rate)}/s)`, latenciesMs: embedded.lat },
    { label: `${nNodes} nodes on Kafka (${f0(cluster.rate)}/s)`, latenciesMs: cluster.lat },
  ]),
);
if (bEnv && bRounds.length) {
  // B over its baseline of the same round, requests/s and machine µs per request (client included).
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
  for (const path of ['embedded', 'cluster'] as const) {
    if (!rounds[0][path].rate) continue;
    const rate = bRounds.map((b, i) => b[path].rate / rounds[i][path].rate);
    const machine = bRounds.map((b, i) => b[path].machineUs / rounds[i][path].machineUs);
    // The cluster's half-rate p99 (its latency goal) too: B's own open loop, at half B's own rate.
    const halfOf = (r: Row) => (r.halfP99 === null ? '–' : f1(r.halfP99));
    const half =
      path === 'cluster' && bRounds.some((b) => b[path].halfP99 !== null)
        ? `; B's p99 at half rate ${bRounds.map((b) => halfOf(b[path])).join(' / ')} ms against ${rounds.map((r) => halfOf(r[path])).join(' / ')}`
        : '';
    console.log(
      `B (${process.env.B_ENV}) over the baseline, ${path}: requests/s ${median(rate).toFixed(2)} (rounds ${rate.map((x) => x.toFixed(2)).join(' / ')}), machine per request ${median(machine).toFixed(2)} (${machine.map((x) => x.toFixed(2)).join(' / ')}); B's single-client p50 ${bRounds.map((b) => f1(b[path].single)).join(' / ')} ms against ${rounds.map((r) => f1(r[path].single)).join(' / ')}${half}`,
    );
  }
}
chainChild.stdin!.end();
await new Promise((r) => chainChild.once('exit', r));
if (ownBroker) execFileSync('bash', ['deploy/kafka.sh', 'stop', '--port', '19592'], { cwd: root, stdio: 'ignore' });
process.exit(0);

// Long fuzz run (not a test): the properties of test/integration/edge/fuzz.test.ts, round after round over
// every edge, for a given time against a node running as its own process (PostgreSQL, in-process
// bus). Prints per edge the inputs sent, the answers by status, the failures (an answer the
// contract does not allow) and the /healthz probe fired beside every input (p50, p99, slowest).
// Usage: npx tsx bench/fuzz.ts [seconds=60] [runsPerRound=50]   (FUZZ_SEED to repeat a run)
import fc from 'fast-check';
import { Keypair } from '@solana/web3.js';
import { freshDatabase } from '../test/helpers/db.ts';
import { startProcessNode } from '../test/helpers/process-node.ts';
import { bearer } from '../test/helpers/clob.ts';
import { edgeProperties, knownHostile, Responsiveness } from '../test/helpers/fuzz-edges.ts';
import { latencyPlot } from './plot.ts';
import { exitOnSignals } from '../test/helpers/children.ts';
exitOnSignals(); // stopped by a signal, a bench takes its service nodes with it

const [seconds = 60, perRound = 50] = process.argv.slice(2).map(Number);
const PLATFORM = 'fuzz-platform-secret';
const WEBHOOK = 'fuzz-webhook-secret';
const db = await freshDatabase('benchfuzz');
const node = await startProcessNode({
  DATABASE_URL: db.url,
  KAFKA_BROKERS: '',
  PLATFORM_JWT_SECRET: PLATFORM,
  PARLAY_WEBHOOK_AUTH_SECRET: WEBHOOK,
  LOG_LEVEL: 'error',
});
const wallet = Keypair.generate();
const target = { url: node.url, webhookSecret: WEBHOOK, platformSecret: PLATFORM, clobToken: await bearer(node.url, wallet), wallet };

interface Row {
  inputs: number;
  statuses: Map<number, number>;
  failures: string[];
  seen: Responsiveness;
}
const rows = new Map<string, Row>();
const row = (name: string) =>
  rows.get(name) ?? rows.set(name, { inputs: 0, statuses: new Map(), failures: [], seen: new Responsiveness() }).get(name)!;
let current = '';
const tally = {
  note(ms: number, what: string) {
    const r = row(current);
    r.inputs++;
    r.seen.note(ms, what);
  },
} as Responsiveness;
const props = edgeProperties(target, tally);
const known = knownHostile(target);
// Statuses are read back from the error or answered text: wrap fetch to count them.
const realFetch = globalThis.fetch;
globalThis.fetch = (async (input: any, init?: any) => {
  const res = await realFetch(input, init);
  if (!String(input).endsWith('/healthz')) row(current).statuses.set(res.status, (row(current).statuses.get(res.status) ?? 0) + 1);
  return res;
}) as typeof fetch;

const until = Date.now() + seconds * 1000;
let round = 0;
let seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
while (Date.now() < until) {
  for (const name of Object.keys(props) as (keyof typeof props)[]) {
    if (Date.now() >= until) break;
    current = name;
    const r = await fc.check(props[name] as fc.IAsyncPropertyWithHooks<any>, {
      numRuns: perRound,
      seed: seed++,
      examples: round === 0 ? ((known[name] ?? []) as any) : [],
      endOnFailure: true,
    });
    if (r.failed) {
      const e = r.errorInstance as Error & { cause?: any };
      row(name).failures.push(
        `seed ${r.seed}: ${String(e?.message ?? e).slice(0, 160)}${e?.cause ? ` (${e.cause.code ?? e.cause.message})` : ''}; input ${JSON.stringify(r.counterexample)?.slice(0, 300)}`,
      );
    }
  }
  round++;
}
globalThis.fetch = realFetch;
const alive = (await fetch(`${node.url}/readyz`)).status;
await node.kill('SIGTERM');
await db.drop();

console.log(`\nfuzz: ${seconds} s, ${round} rounds of ${perRound} inputs per edge; node /readyz after: ${alive}\n`);
console.log('| edge | inputs | answers by status | failures | /healthz p50 | p99 | slowest |');
console.log('|---|---|---|---|---|---|---|');
for (const [name, r] of rows) {
  const statuses = [...r.statuses]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
  console.log(
    `| ${name} | ${r.inputs} | ${statuses} | ${r.failures.length} | ${r.seen.quantile(0.5).toFixed(1)} ms | ${r.seen.quantile(0.99).toFixed(1)} ms | ${r.seen.slowest.ms.toFixed(1)} ms |`,
  );
}
for (const [name, r] of rows) for (const f of r.failures.slice(0, 5)) console.log(`  ${name}: ${f}`);
console.log(
  'plot: %s',
  await latencyPlot(
    'fuzz',
    `/healthz beside hostile input, ${seconds} s per run`,
    [...rows].map(([name, r]) => ({ label: name, latenciesMs: r.seen.probes })),
  ),
);
const failed = [...rows.values()].some((r) => r.failures.length || r.seen.slowest.ms >= 500);
process.exit(failed ? 1 : 0);

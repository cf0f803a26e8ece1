// Issue 19: our own fuzz suite. fast-check generates hostile input for every edge of a node running
// as its own process (PostgreSQL, in-process bus): webhook bodies and log lines, Platform JWTs,
// sign-in, signed orders, cancels and query strings; the reproductions are tried first.
// Every answer must be one the contract allows (a 4xx in its shape, or 200 where right; never a
// 5xx), no row may be written for a rejected input, and a /healthz probe fired beside every input
// must come back fast: the node never freezes. Bounded for CI (FUZZ_RUNS per edge, default 60);
// bench/fuzz.ts runs the same for a minute or more.
import test from 'ava';
import fc from 'fast-check';
import pg from 'pg';
import { Keypair } from '@solana/web3.js';
import { startProcessNode, type ProcessNode } from '../../helpers/process-node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { bearer } from '../../helpers/clob.ts';
import { edgeProperties, knownHostile, Responsiveness } from '../../helpers/fuzz-edges.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const PLATFORM = 'fuzz-platform-secret';
const WEBHOOK = 'fuzz-webhook-secret';

let node: ProcessNode;
let db: { url: string; drop(): Promise<void> };
let pgc: pg.Client;
let props: ReturnType<typeof edgeProperties>;
let known: ReturnType<typeof knownHostile>;

test.before(async () => {
  db = await freshDatabase('fuzz');
  node = await startProcessNode({
    DATABASE_URL: db.url,
    KAFKA_BROKERS: '',
    PLATFORM_JWT_SECRET: PLATFORM,
    PARLAY_WEBHOOK_AUTH_SECRET: WEBHOOK,
    LOG_LEVEL: 'warn',
  });
  pgc = new pg.Client({ connectionString: db.url });
  await pgc.connect();
  const wallet = Keypair.generate();
  const target = { url: node.url, webhookSecret: WEBHOOK, platformSecret: PLATFORM, clobToken: await bearer(node.url, wallet), wallet };
  seen = new Responsiveness();
  props = edgeProperties(target, { note: (ms: number, what: string) => seen.note(ms, what) } as Responsiveness);
  known = knownHostile(target);
});
test.after.always(async () => {
  await pgc?.end();
  await node?.kill('SIGKILL');
  await db?.drop();
});

let seen: Responsiveness;
const count = async (table: string) => Number((await pgc.query(`select count(*) from ${table}`)).rows[0].count);

/** Runs one edge's property (its known hostile inputs first); the node must stay responsive throughout. */
async function fuzz(t: any, name: keyof typeof props, runs = RUNS) {
  seen = new Responsiveness();
  const r = await fc.check(props[name] as fc.IAsyncPropertyWithHooks<any>, {
    numRuns: runs,
    seed: SEED,
    examples: (known[name] ?? []) as any,
    endOnFailure: true,
  });
  const example = JSON.stringify(r.counterexample)?.slice(0, 400);
  t.false(
    r.failed,
    `${name} (FUZZ_SEED=${SEED}): ${String((r.errorInstance as Error)?.message ?? r.errorInstance).slice(0, 600)}\n  input: ${example}`,
  );
  // Every probe answered, nearly all within 100 ms. A probe over 100 ms has its input sent again
  // (up to three tries, the fastest counts): a loaded CI machine holds back a rare probe once, a
  // freeze holds back the probe of its input for seconds on every try.
  t.log(
    `${seen.probes.length} probes: p50 ${seen.quantile(0.5).toFixed(1)} ms, p99 ${seen.quantile(0.99).toFixed(1)} ms, slowest ${seen.slowest.ms.toFixed(1)} ms beside ${seen.slowest.what}`,
  );
  t.true(seen.quantile(0.99) < 100, `p99 of /healthz beside hostile ${name}: ${seen.quantile(0.99).toFixed(1)} ms`);
  t.true(seen.slowest.ms < 500, `slowest /healthz: ${seen.slowest.ms.toFixed(1)} ms beside ${seen.slowest.what}`);
}

test.serial('webhook bodies: refused at the edge, nothing stored', async (t) => {
  await fuzz(t, 'webhookBodies');
  t.is(await count('parlays'), 0, 'no parlay from a hostile body');
});
test.serial('sign-in: no token and no row for a message nobody signed', async (t) => {
  const before = await count('auth_signins');
  await fuzz(t, 'signIn');
  t.is(await count('auth_signins'), before);
});
test.serial("signed orders: the contract's rejections, no order", async (t) => {
  await fuzz(t, 'orders');
  t.is(await count('open_orders'), 0);
});
test.serial('cancels of what is not an order', async (t) => {
  await fuzz(t, 'cancels');
  t.is(await count('open_orders'), 0);
});
test.serial('Platform JWTs: forged, malformed, hostile claims', async (t) => {
  await fuzz(t, 'platformJwts');
});
test.serial('query strings: NUL, invalid escapes and bytes, long values', async (t) => {
  await fuzz(t, 'queries');
});
test.serial('webhook log lines and fields spliced into a real delivery', async (t) => {
  await fuzz(t, 'webhookLogs', Math.ceil(RUNS / 2));
  t.is((await fetch(`${node.url}/readyz`)).status, 200);
});

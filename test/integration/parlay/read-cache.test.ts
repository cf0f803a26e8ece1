// The in-memory parlay reads (src/parlay/read-cache.ts) on PostgreSQL: answered from memory, and
// never stale after a change — through this node's webhook (at once), another writer's SQL (on the
// change notification), a market's question, or a lost notification connection.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import pg from 'pg';
import { testNode, call, token, WEBHOOK_SECRET, KAFKA_BROKERS } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { rawTx, parlayCreated, legSettled } from '../../helpers/events.ts';
import { ParlayReadCache } from '../../../src/parlay/read-cache.ts';
import type { ServiceNode } from '../../../src/node.ts';

const wallet = Keypair.generate().publicKey;
const alice = token({ sub: 'u-alice', wallet: wallet.toBase58() });

async function hits(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = /parlay_read_cache_total\{outcome="hit"[^}]*\} (\d+)/.exec(text);
  return m ? Number(m[1]) : 0;
}

async function webhook(base: string, txs: unknown[]) {
  const r = await call(base, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body: txs });
  if (r.status !== 200) throw new Error(`webhook ${r.status} ${JSON.stringify(r.body)}`);
}

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 3000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

const list = async (base: string, tk = alice) => (await call(base, 'GET', '/api/parlays/user/', { token: tk })).body.data as any[];

let node: ServiceNode;
let db: { url: string; drop(): Promise<void> };
let sql: pg.Client;

test.before(async () => {
  db = await freshDatabase();
  node = await testNode({ DATABASE_URL: db.url });
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
});
test.after.always(async () => {
  await sql?.end();
  await node?.close();
  await db?.drop();
});

test.serial("repeated reads come from memory; this node's webhook shows at once", async (t) => {
  await webhook(node.url, [rawTx('c-1', 10, [parlayCreated(1, wallet, 10)])]);
  t.deepEqual(
    (await list(node.url)).map((p) => [p.parlay_id, p.status, p.legs_won]),
    [[1, 'active', 0]],
  );
  const before = await hits(node.url);
  for (let i = 0; i < 5; i++) t.is((await list(node.url)).length, 1);
  t.is((await call(node.url, 'GET', '/api/parlays/1/', { token: alice })).body.data.parlay_id, 1);
  t.is((await call(node.url, 'GET', '/api/parlays/1/', { token: alice })).body.data.parlay_id, 1);
  t.is((await hits(node.url)) - before, 6);
  // Cached, then changed through this node: the very next read shows it (list, one parlay, filters).
  t.is((await list(node.url)).length, 1);
  t.is((await call(node.url, 'GET', '/api/parlays/user/?status=active', { token: alice })).body.data.length, 1);
  await webhook(node.url, [rawTx('s-1-0', 11, [legSettled(1, 0, 1, 0, 1, 1, 0, 0, 11)]), rawTx('c-2', 12, [parlayCreated(2, wallet, 12)])]);
  t.deepEqual(
    (await list(node.url)).map((p) => [p.parlay_id, p.legs_won]),
    [
      [2, 0],
      [1, 1],
    ],
  );
  t.is((await call(node.url, 'GET', '/api/parlays/1/', { token: alice })).body.data.legs_won, 1);
  t.is((await call(node.url, 'GET', '/api/parlays/user/?status=active', { token: alice })).body.data.length, 2);
  // A parlay that did not exist when it was asked for (a cached 404) appears once created.
  t.is((await call(node.url, 'GET', '/api/parlays/3/', { token: alice })).status, 404);
  await webhook(node.url, [rawTx('c-3', 13, [parlayCreated(3, wallet, 13)])]);
  t.is((await call(node.url, 'GET', '/api/parlays/3/', { token: alice })).status, 200);
});

test.serial("another writer's change reaches the cached reads through its notification", async (t) => {
  t.is((await list(node.url)).find((p) => p.parlay_id === 1).status, 'active');
  await sql.query(`update parlays set status = 'voided' where parlay_id = 1`);
  const after = await eventually(
    () => list(node.url),
    (l) => l.find((p) => p.parlay_id === 1).status === 'voided',
  );
  t.is(after.find((p) => p.parlay_id === 1).status, 'voided');
  // A leg's change (the trigger finds the wallet through the parlay).
  await sql.query(`update parlay_legs set status = 'won' where parlay_id = 2 and leg_index = 2`);
  const legs = await eventually(
    () => list(node.url),
    (l) => l.find((p) => p.parlay_id === 2).legs[2].status === 'won',
  );
  t.is(legs.find((p) => p.parlay_id === 2).legs[2].status, 'won');
});

test.serial("a market's question shows in the cached legs once the market is written", async (t) => {
  const leg = (await list(node.url)).find((p) => p.parlay_id === 3).legs[0];
  t.is(leg.question, '');
  await sql.query(
    `insert into markets (condition_id, question, yes_token_id, no_token_id, tick_size, min_size, taker_fee_bps, status, on_chain_market_id, created_at, updated_at)
    values ('cond-q', 'Will it rain?', 'y', 'n', 10000, 1, 0, 'active', $1, now(), now())`,
    [leg.on_chain_market_id],
  );
  const after = await eventually(
    () => list(node.url),
    (l) => l.find((p) => p.parlay_id === 3).legs[0].question === 'Will it rain?',
  );
  t.is(after.find((p) => p.parlay_id === 3).legs[0].question, 'Will it rain?');
  await sql.query(`update markets set question = 'Will it snow?' where condition_id = 'cond-q'`);
  const again = await eventually(
    () => list(node.url),
    (l) => l.find((p) => p.parlay_id === 3).legs[0].question === 'Will it snow?',
  );
  t.is(again.find((p) => p.parlay_id === 3).legs[0].question, 'Will it snow?');
});

test.serial('a lost notification connection: reads go to the database, nothing stale is served, caching resumes', async (t) => {
  t.is((await list(node.url)).length, 3);
  const { rowCount } = await sql.query(
    `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'listen:node_sync' and datname = current_database()`,
  );
  t.is(rowCount, 1);
  // Changed while the node is not listening: must not be answered from what was cached before.
  await sql.query(`update parlays set status = 'refunded' where parlay_id = 2`);
  const seen = await eventually(
    () => list(node.url),
    (l) => l.find((p) => p.parlay_id === 2).status === 'refunded',
    500,
  );
  t.is(seen.find((p) => p.parlay_id === 2).status, 'refunded');
  // Listening again (reconnects within about a second): reads are kept again.
  const resumed = await eventually(
    async () => {
      const h = await hits(node.url);
      await list(node.url);
      await list(node.url);
      return (await hits(node.url)) - h;
    },
    (d) => d >= 1,
    5000,
  );
  t.true(resumed >= 1);
  t.is((await list(node.url)).find((p) => p.parlay_id === 2).status, 'refunded');
});

test.serial('a cluster: a change through one node reaches the cached reads of another', async (t) => {
  const db2 = await freshDatabase();
  const common = { DATABASE_URL: db2.url, KAFKA_BROKERS, TOPIC_PREFIX: `rc${Date.now()}.`, KAFKA_GROUP: 'read-cache' };
  const nodes: ServiceNode[] = [];
  try {
    const a = await testNode({ ...common, NODE_ID: 'rc-a' });
    nodes.push(a);
    const b = await testNode({ ...common, NODE_ID: 'rc-b' });
    nodes.push(b);
    await webhook(a.url, [rawTx('c-1', 10, [parlayCreated(1, wallet, 10)])]);
    t.is((await list(b.url))[0].legs_won, 0);
    t.is((await list(b.url))[0].legs_won, 0); // cached on b
    await webhook(a.url, [rawTx('s-1-0', 11, [legSettled(1, 0, 1, 0, 1, 1, 0, 0, 11)])]);
    const seen = await eventually(
      () => list(b.url),
      (l) => l[0].legs_won === 1,
      2000,
    );
    t.is(seen[0].legs_won, 1);
    t.is((await list(a.url))[0].legs_won, 1);
  } finally {
    for (const n of nodes) await n.close();
    await db2.drop();
  }
});

/** A miss of wallet `W` whose load answers when `release` is called. */
function heldRead(cache: ParlayReadCache) {
  let release!: (v: string) => void;
  const pending = cache.read('W', '', () => new Promise<string>((r) => (release = r)));
  return { pending, release };
}

test('a miss that raced with a change to its wallet is answered but not kept', async (t) => {
  const cache = new ParlayReadCache(() => true, 10);
  const { pending, release } = heldRead(cache);
  cache.changed('w');
  release('old');
  t.is(await pending, 'old');
  t.is(await cache.read('W', '', async () => 'new'), 'new');
  t.is(await cache.read('W', '', async () => 'newer'), 'new'); // kept now
  cache.changed('w');
  t.is(await cache.read('w', '', async () => 'newest'), 'newest');
  // Not listening: nothing is kept or served from memory.
  const off = new ParlayReadCache(() => false, 10);
  t.is(await off.read('W', '', async () => 'a'), 'a');
  t.is(await off.read('W', '', async () => 'b'), 'b');
  // Bounded: the oldest wallet goes first.
  const small = new ParlayReadCache(() => true, 2);
  for (const w of ['a', 'b', 'c']) await small.read(w, '', async () => w);
  t.is(small.size, 2);
  t.is(await small.read('a', '', async () => 'reloaded'), 'reloaded');
});

async function syncs(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = /webhook_phase_seconds_count\{[^}]*phase="sync"[^}]*\} (\d+)/.exec(text);
  return m ? Number(m[1]) : 0;
}

test.serial('a webhook waits for its notifications only while the cache holds or loads an answer', async (t) => {
  const db2 = await freshDatabase();
  const fresh = await testNode({ DATABASE_URL: db2.url });
  try {
    const bob = Keypair.generate().publicKey;
    const bobToken = token({ sub: 'u-bob', wallet: bob.toBase58() });
    // Nothing cached, nothing loading: answered without the wait, and the write is read at once.
    await webhook(fresh.url, [rawTx('q-1', 10, [parlayCreated(1, bob, 10)])]);
    t.is(await syncs(fresh.url), 0);
    t.deepEqual(
      (await list(fresh.url, bobToken)).map((p) => [p.parlay_id, p.legs_won]),
      [[1, 0]],
    );
    // Once the cache keeps an answer (carol's: no write touches her, so no notification drops it;
    // bob's own may be dropped by his writes' notifications at any time), the next delivery waits,
    // and the very next read shows it.
    const carol = token({ sub: 'u-carol', wallet: Keypair.generate().publicKey.toBase58() });
    const kept = await eventually(
      async () => {
        const h = await hits(fresh.url);
        await list(fresh.url, carol);
        return (await hits(fresh.url)) - h;
      },
      (d) => d === 1,
    );
    t.is(kept, 1);
    await webhook(fresh.url, [rawTx('q-2', 11, [legSettled(1, 0, 1, 0, 1, 1, 0, 0, 11)])]);
    t.is(await syncs(fresh.url), 1);
    t.deepEqual(
      (await list(fresh.url, bobToken)).map((p) => [p.parlay_id, p.legs_won]),
      [[1, 1]],
    );
  } finally {
    await fresh.close();
    await db2.drop();
  }
});

test('quiet: no answer kept and none loading', async (t) => {
  const cache = new ParlayReadCache(() => true, 10);
  t.true(cache.quiet);
  const { pending, release } = heldRead(cache);
  t.false(cache.quiet); // loading: what it read may predate a commit that ends meanwhile
  release('a');
  await pending;
  t.false(cache.quiet); // kept
  cache.changed('w');
  t.true(cache.quiet);
  // A load that fails leaves it quiet again.
  await t.throwsAsync(cache.read('W', '', () => Promise.reject(new Error('down'))));
  t.true(cache.quiet);
  // Not listening: nothing is kept, nothing counts.
  const off = new ParlayReadCache(() => false, 10);
  await off.read('W', '', async () => 'x');
  t.true(off.quiet);
});

test.serial('a remembered bearer token still expires', async (t) => {
  const short = token({ sub: 'u-short', wallet: wallet.toBase58() }, undefined, 2);
  t.is((await call(node.url, 'GET', '/api/parlays/user/', { token: short })).status, 200);
  t.is((await call(node.url, 'GET', '/api/parlays/user/', { token: short })).status, 200); // verified once, remembered
  await new Promise((r) => setTimeout(r, 2100));
  const late = await call(node.url, 'GET', '/api/parlays/user/', { token: short });
  t.is(late.status, 401);
  t.is(late.body.error, 'unauthorized');
});

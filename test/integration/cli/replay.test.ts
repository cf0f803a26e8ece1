// `ops rebuild-read-models`, `ops replay-partition` and `ops inspect-actor` (issue 8, item 6) on real
// Kafka, PostgreSQL and the local chain: a node mirrors parlays (webhook fixtures) and runs a book
// (orders, a trade, a cancel); stopped, its read models are rebuilt from the command topics and come
// out identical; a corrupted partition is replayed back; an actor is inspected from its snapshot and
// from the log alone; a node started afterwards carries on.
import test from 'ava';
import pg from 'pg';
import { call, testNode, KAFKA_BROKERS } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';
import { deliver } from '../../helpers/scenario.ts';
import { runOps } from '../../helpers/ops-cli.ts';
import { partitionFor } from '../../../src/runtime/partitioner.ts';
import { openContext } from '../../../src/cli/context.ts';
import { rebuildReadModels } from '../../../src/cli/replay.ts';
import type { ServiceNode } from '../../../src/node.ts';

let w: ClobWorld;
let url: string;
let prefix: string;
let env: Record<string, string | undefined>;
let restarted: ServiceNode | null = null;

test.before(async () => {
  w = await clobWorld();
  url = w.node.config.databaseUrl!;
  prefix = w.node.config.topicPrefix;
  env = { DATABASE_URL: url, KAFKA_BROKERS, TOPIC_PREFIX: prefix, TOPIC_PARTITIONS: '4', APP_ENV: 'development' };
});
test.after.always(async () => {
  await restarted?.close();
  await w?.close();
});

async function q(sql: string, params: unknown[] = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

/** Everything the projections and the runtime wrote, in a stable order (publication flags aside). */
async function dump() {
  return {
    parlays: await q('select * from parlays order by parlay_id'),
    legs: await q('select * from parlay_legs order by parlay_id, leg_index'),
    vault: await q('select * from vault'),
    config: await q('select * from program_config'),
    orders: await q('select * from open_orders order by id'),
    trades: await q('select * from trades order by id'),
    parties: await q('select * from trade_parties order by trade_id, address_lc, role'),
    ledger: await q('select market, topic, seq, type, owner_lc, payload, at from ledger_messages order by market, topic, seq'),
    // (a snapshot's next_offset is where its last batch ended: batch boundaries differ between runs)
    snapshots: await q('select kind, key, state, topic, partition from actor_snapshots order by kind, key'),
    offsets: await q('select topic, partition, next_offset from consumer_offsets order by topic, partition'),
    inbox: await q('select key, reply from command_inbox order by key'),
  };
}

test.serial('rebuild, replay a partition and inspect actors from the topics', async (t) => {
  const node = w.node;
  // Parlay side: the fixture deliveries (with the deferred one).
  for (const f of ['01', '02', '03', '04', '05', '07', '08', '07']) await deliver(node.url, f);
  // Order book: a resting order, a trade against it, a cancel.
  const place = (tok: string, o: any) => call(node.url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType: 'GTC' } });
  const rest = await place(w.A, order(w.alice, w.market.yes_token_id, 'BUY', '0.40', '10'));
  t.is(rest.body.status, 'live', JSON.stringify(rest.body));
  const take = await place(w.B, order(w.bob, w.market.yes_token_id, 'SELL', '0.40', '4', { feeRateBps: 100 }));
  t.is(take.body.status, 'matched', JSON.stringify(take.body));
  const other = await place(w.A, order(w.alice, w.market.yes_token_id, 'BUY', '0.30', '5'));
  const cancel = await call(node.url, 'POST', '/v1/orders/cancel', { token: w.A, body: { orderID: other.body.orderID } });
  t.deepEqual(cancel.body.canceled, [other.body.orderID]);
  await new Promise((r) => setTimeout(r, 1500)); // the outbox's wallet messages and the ledger relay settle

  // While the node runs, the rebuild refuses.
  const refused = await runOps(['rebuild-read-models', '--quiet'], env);
  t.is(refused.code, 2, refused.stderr);
  t.regex(refused.stderr, /stop them first/);

  await node.close();
  const before = await dump();
  t.true(
    before.parlays.length === 2 && before.trades.length === 1 && before.orders.length === 3,
    JSON.stringify({ p: before.parlays.length, t: before.trades.length, o: before.orders.length }),
  );

  // inspect-actor: a parlay's state is its rows (no snapshot); the log alone gives the same state.
  const fromLog = await runOps(['inspect-actor', '--kind', 'parlay', '--key', '1', '--quiet'], env);
  t.is(fromLog.code, 0, fromLog.stderr);
  t.like(fromLog.json, { kind: 'parlay', key: '1', topic: `${prefix}parlay.events`, partition: partitionFor('1', 4) });
  t.is(fromLog.json.snapshot, null, 'parlays keep no snapshots');
  t.truthy(fromLog.json.rows);
  t.deepEqual(fromLog.json.state, fromLog.json.rows, 'the log alone gives the state the rows hold');
  t.is((await q("select count(*)::int as n from actor_snapshots where kind = 'parlay'"))[0].n, 0);
  const book = await runOps(['inspect-actor', 'market-book', w.market.condition_id, '--quiet'], env);
  t.is(book.code, 0, book.stderr);
  t.truthy(book.json.snapshot, 'the book has a snapshot');
  t.true(fromLog.json.replayed.length >= 3, 'created, two settlements, claimed');
  t.deepEqual(
    fromLog.json.replayed.filter((r: any) => r.events.length).map((r: any) => r.command),
    ['ParlayCreated', 'LegSettled', 'LegSettled', 'ParlayClaimed'],
  );
  const badKind = await runOps(['inspect-actor', '--kind', 'nope', '--key', '1', '--quiet'], env);
  t.is(badKind.code, 2);

  // rebuild-read-models, interrupted right after clearing (as Ctrl-C would), then resumed by the
  // same command: everything comes back identical.
  const ctx = await openContext(env);
  const stopped = new AbortController();
  stopped.abort();
  const cut = await rebuildReadModels(ctx, { signal: stopped.signal, quiet: true });
  await ctx.close();
  t.is(cut.status, 'interrupted');
  t.is((await q('select count(*)::int as n from parlays'))[0].n, 0, 'cleared, not replayed yet');
  const rebuilt = await runOps(['rebuild-read-models'], env);
  t.is(rebuilt.code, 0, rebuilt.stderr);
  t.like(rebuilt.json, { status: 'done', resumed: true });
  t.true(rebuilt.json.records > 0);
  t.regex(rebuilt.stderr, /rebuild: replaying the command topics .*100\.0%/);
  const after = await dump();
  for (const k of Object.keys(before) as (keyof typeof before)[]) t.deepEqual(after[k], before[k], k);
  t.is((await q('select count(*)::int as n from ledger_unpublished'))[0].n, 0, 'nothing is published twice');
  t.is((await q('select count(*)::int as n from outbox'))[0].n, 0, 'nothing is queued again');

  // replay-partition: a corrupted parlay row is made right.
  const p = partitionFor('1', 4);
  await q("update parlays set status = 'lost', actual_payout = 0 where parlay_id = 1");
  const replayed = await runOps(['replay-partition', '--topic', 'parlay.events', '--partition', String(p)], env);
  t.is(replayed.code, 0, replayed.stderr);
  t.like(replayed.json, { status: 'done', partitions: 1 });
  const fixed = await dump();
  t.deepEqual(fixed.parlays, before.parlays);
  t.deepEqual(fixed.legs, before.legs);
  t.deepEqual(fixed.vault, before.vault);
  t.deepEqual(fixed.inbox, before.inbox);
  t.deepEqual(fixed.offsets, before.offsets);
  // The book's partition too: its orders, trades and ledger come back the same.
  const bp = partitionFor(w.market.condition_id, 4);
  await q('delete from trades');
  const r2 = await runOps(['replay-partition', '--topic', 'clob.commands', '--partition', String(bp), '--quiet'], env);
  t.is(r2.code, 0, r2.stderr);
  const fixed2 = await dump();
  for (const k of ['orders', 'trades', 'parties', 'ledger', 'offsets', 'inbox'] as const) t.deepEqual(fixed2[k], before[k], k);
  t.is((await q('select count(*)::int as n from ledger_unpublished'))[0].n, 0);
  const bad = await runOps(['replay-partition', '--topic', 'nope', '--partition', '0', '--quiet'], env);
  t.is(bad.code, 2);

  // A node started on the rebuilt store carries on: reads, and new commands on both sides.
  restarted = await testNode(
    {
      DATABASE_URL: url,
      KAFKA_BROKERS,
      TOPIC_PREFIX: prefix,
      CLOB_COLLATERAL_MINT: node.config.collateralMint,
      CLOB_DELEGATE: node.config.delegate,
      CLOB_INTERNAL_TOKEN: 'internal-secret',
    },
    { chain: node.parlays.chain() },
  );
  const oo = await call(restarted.url, 'GET', '/v1/open-orders', { token: w.A });
  t.is(oo.status, 200);
  t.is(oo.body.length, 2);
  const again = await call(restarted.url, 'POST', '/v1/order', {
    token: w.A,
    body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.20', '3'), orderType: 'GTC' },
  });
  t.is(again.body.status, 'live', JSON.stringify(again.body));
  const redeliver = await deliver(restarted.url, '05');
  t.is(redeliver.status, 200, 'a redelivery is still recognised after the rebuild');
  const p1 = await call(restarted.url, 'GET', '/api/parlays/admin/?status=claimed', {
    token: (await import('../../helpers/clob.ts')).superuser(),
  });
  t.is(p1.body.count, 1);
});

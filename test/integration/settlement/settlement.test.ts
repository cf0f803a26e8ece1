// The settlement executor against the local chain, PostgreSQL and Kafka (issue 5): exact balances
// of confirmed COMPLEMENTARY, MINT and MERGE trades (fees included), compute exhaustion, a stuck
// transaction, a maker without allowance, and the ledger messages of it all.
import test from 'ava';
import { WsClient } from '../../helpers/ws.ts';
import { createRevokeInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { VersionedTransaction } from '@solana/web3.js';
import { BLOCKHASH_VALID_SLOTS } from '../../../src/chain/local/index.ts';
import { budgetOf, escrowOf } from '../../../src/chain/settlement-tx.ts';
import { call } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { settlementWorld, tradeOf, until, U, type SettlementWorld } from '../../helpers/settlement-world.ts';

let w: SettlementWorld;

test.before(async () => {
  w = await settlementWorld();
  await w.approveAll(w.alice);
  await w.approveAll(w.bob);
});
test.after.always(async () => {
  await w?.close();
});

const place = (tok: string, o: any, orderType = 'GTC') =>
  call(w.node.url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType } });
const sql = (q: string, p: unknown[] = []) => (w.node.orm.em.fork() as any).execute(q, p) as Promise<any[]>;
const settled = (tradeId: string, status = 'CONFIRMED') =>
  until(
    async () => {
      const t = await tradeOf(w.node.url, w.B, w.market.condition_id, tradeId);
      return t?.status === status ? t : null;
    },
    30_000,
    `trade ${tradeId} ${status}`,
  );
const attempts = (tradeId: string) =>
  sql('select attempt, signature, tx, cu_limit, cu_price::text, outcome from settlement_attempts where trade_id = ? order by attempt', [
    tradeId,
  ]);
const tradeMessages = async (tradeId: string) =>
  (
    await sql("select seq::int, type, payload from ledger_messages where market = ? and topic = 'trades' order by seq", [
      w.market.condition_id,
    ])
  ).filter((r) => (r.payload.trade?.id ?? r.payload.trade_id) === tradeId);

function snapshot() {
  const who = { alice: w.alice.publicKey, bob: w.bob.publicKey };
  const out: Record<string, bigint> = {};
  for (const [n, pk] of Object.entries(who))
    for (const [m, mint] of Object.entries({ c: w.collateral, yes: w.yes, no: w.no })) out[`${n}.${m}`] = w.bal(pk, mint);
  out.fee = w.bal(w.feeRecipient.publicKey, w.collateral);
  out.escrow = w.chain.tokenBalance(escrowOf({ collateralMint: w.collateral, delegate: w.delegate.publicKey }));
  return out;
}
const delta = (a: Record<string, bigint>, b: Record<string, bigint>) =>
  Object.fromEntries(
    Object.keys(a)
      .map((k) => [k, b[k] - a[k]])
      .filter(([, v]) => v !== 0n),
  );

test.serial('a confirmed trade moves exactly the right balances: COMPLEMENTARY, MINT and MERGE, fees included', async (t) => {
  const yes = w.yes.toBase58();
  const no = w.no.toBase58();
  // Bob's user channel (docs/ws.md) follows his trade through settlement.
  const bobChannel = await WsClient.open(w.node.url, '/ws/user', { authorization: `Bearer ${w.B}` });
  t.teardown(() => bobChannel.ws.terminate());
  await bobChannel.until((m) => m.event_type === 'auth');
  // COMPLEMENTARY: Bob buys 4 YES at 0.40 from Alice; fee 1% × min(0.4, 0.6) × 4 = 0.016
  let before = snapshot();
  t.is((await place(w.A, order(w.alice, yes, 'SELL', '0.40', '4'))).body.status, 'live');
  const r1 = await place(w.B, order(w.bob, yes, 'BUY', '0.40', '4', { feeRateBps: 100 }));
  t.is(r1.body.status, 'matched');
  const t1 = await settled(r1.body.tradeIDs[0]);
  t.deepEqual(delta(before, snapshot()), {
    'alice.c': 1_600_000n,
    'alice.yes': -4n * U,
    'bob.c': -1_616_000n,
    'bob.yes': 4n * U,
    fee: 16_000n,
  });
  t.truthy(t1.transaction_hash);
  const got = await w.chain.connection().getTransaction(t1.transaction_hash, { maxSupportedTransactionVersion: 0 });
  t.is(got!.meta!.err, null);
  t.deepEqual(
    (await tradeMessages(t1.id)).map((m) => m.type),
    ['trade_matched', 'trade_mined', 'trade_confirmed'],
  );
  await bobChannel.until((m) => m.event_type === 'trade' && m.id === t1.id && m.status === 'CONFIRMED');
  t.deepEqual(
    bobChannel.messages.filter((m) => m.event_type === 'trade' && m.id === t1.id).map((m) => m.status),
    ['MATCHED', 'MINED', 'CONFIRMED'],
    'the user channel carries the trade MATCHED → MINED → CONFIRMED, in order',
  );

  // MINT: Alice bids NO at 0.30, Bob buys YES at 0.70: a fresh pair from both sides' collateral
  before = snapshot();
  await place(w.A, order(w.alice, no, 'BUY', '0.30', '5'));
  const r2 = await place(w.B, order(w.bob, yes, 'BUY', '0.70', '5', { feeRateBps: 100 }));
  const t2 = await settled(r2.body.tradeIDs[0]);
  t.is(t2.match_type, 'MINT');
  t.deepEqual(delta(before, snapshot()), {
    'alice.c': -1_500_000n,
    'alice.no': 5n * U,
    'bob.c': -3_515_000n,
    'bob.yes': 5n * U,
    fee: 15_000n,
    escrow: 5n * U,
  });

  // MERGE: Alice offers NO at 0.30, Bob sells YES at 0.70: the pair is burnt, the escrow pays out
  before = snapshot();
  await place(w.A, order(w.alice, no, 'SELL', '0.30', '5'));
  const r3 = await place(w.B, order(w.bob, yes, 'SELL', '0.70', '5', { feeRateBps: 100 }));
  const t3 = await settled(r3.body.tradeIDs[0]);
  t.is(t3.match_type, 'MERGE');
  t.deepEqual(delta(before, snapshot()), {
    'alice.c': 1_500_000n,
    'alice.no': -5n * U,
    'bob.c': 3_485_000n,
    'bob.yes': -5n * U,
    fee: 15_000n,
    escrow: -5n * U,
  });
  for (const id of [t1.id, t2.id, t3.id]) t.is((await attempts(id)).length, 1, 'one transaction each');
});

test.serial('compute exhaustion: retried with the compute-unit limit and the fee doubled, then confirmed', async (t) => {
  const yes = w.yes.toBase58();
  const channel = await WsClient.open(w.node.url, '/ws/user', { authorization: `Bearer ${w.B}` });
  t.teardown(() => channel.ws.terminate());
  await channel.until((m) => m.event_type === 'auth');
  await place(w.A, order(w.alice, yes, 'SELL', '0.55', '2'));
  const before = snapshot();
  w.chain.faults.exhaustCompute(1);
  const r = await place(w.B, order(w.bob, yes, 'BUY', '0.55', '2', { feeRateBps: 100 }));
  const tr = await settled(r.body.tradeIDs[0]);
  const a = await attempts(tr.id);
  t.is(a.length, 2);
  t.is(a[0].outcome, 'out_of_compute');
  const conn = w.chain.connection();
  const first = await conn.getTransaction(a[0].signature, { maxSupportedTransactionVersion: 0 });
  t.deepEqual((first!.meta!.err as any).InstructionError[1], 'ProgramFailedToComplete');
  const b1 = budgetOf(VersionedTransaction.deserialize(Buffer.from(a[0].tx, 'base64')));
  const b2 = budgetOf(VersionedTransaction.deserialize(Buffer.from(a[1].tx, 'base64')));
  t.is(b2.cuLimit, b1.cuLimit! * 2);
  t.is(b2.cuPrice, b1.cuPrice! * 2n);
  t.is(tr.transaction_hash, a[1].signature);
  // 0.55 × 2 = 1.1; fee 1% × 0.45 × 2 = 0.009: moved once
  t.deepEqual(delta(before, snapshot()), {
    'alice.c': 1_100_000n,
    'alice.yes': -2n * U,
    'bob.c': -1_109_000n,
    'bob.yes': 2n * U,
    fee: 9_000n,
  });
  t.deepEqual(
    (await tradeMessages(tr.id)).map((m) => m.type),
    ['trade_matched', 'trade_retrying', 'trade_mined', 'trade_confirmed'],
  );
  await channel.until((m) => m.event_type === 'trade' && m.id === tr.id && m.status === 'CONFIRMED');
  t.deepEqual(
    channel.messages.filter((m) => m.event_type === 'trade' && m.id === tr.id).map((m) => m.status),
    ['MATCHED', 'RETRYING', 'MINED', 'CONFIRMED'],
    'the user channel says so too',
  );
});

test.serial('a stuck transaction is re-executed with a fresh blockhash once its own expired', async (t) => {
  const yes = w.yes.toBase58();
  await place(w.A, order(w.alice, yes, 'SELL', '0.60', '3'));
  const before = snapshot();
  w.chain.faults.stickNext(1);
  const r = await place(w.B, order(w.bob, yes, 'BUY', '0.60', '3', { feeRateBps: 100 }));
  const id = r.body.tradeIDs[0];
  const [stuck] = await until(
    async () => {
      const a = await attempts(id);
      return a.length ? a : null;
    },
    20_000,
    'the first attempt',
  );
  await until(() => w.chain.chain.stuckSignatures().includes(stuck.signature), 5000, 'the fault to hold it');
  await new Promise((res) => setTimeout(res, 500)); // the executor re-sends the same bytes meanwhile: nothing lands
  t.is((await attempts(id)).length, 1);
  t.is((await tradeOf(w.node.url, w.B, w.market.condition_id, id)).status, 'MATCHED');
  w.chain.advanceSlots(BLOCKHASH_VALID_SLOTS + 1);
  const tr = await settled(id);
  const a = await attempts(id);
  t.is(a.length, 2);
  t.is(a[0].outcome, 'expired');
  t.not(
    VersionedTransaction.deserialize(Buffer.from(a[1].tx, 'base64')).message.recentBlockhash,
    VersionedTransaction.deserialize(Buffer.from(a[0].tx, 'base64')).message.recentBlockhash,
  );
  t.is(
    (await w.chain.connection().getSignatureStatus(a[0].signature, { searchTransactionHistory: true })).value,
    null,
    'the stuck one never landed',
  );
  t.is(tr.transaction_hash, a[1].signature);
  t.deepEqual(delta(before, snapshot()), {
    'alice.c': 1_800_000n,
    'alice.yes': -3n * U,
    'bob.c': -1_812_000n,
    'bob.yes': 3n * U,
    fee: 12_000n,
  });
  const msgs = await tradeMessages(id);
  t.deepEqual(
    msgs.map((m) => m.type),
    ['trade_matched', 'trade_retrying', 'trade_mined', 'trade_confirmed'],
  );
  t.regex(msgs[1].payload.reason, /blockhash expired/);
});

test.serial('a maker without allowance: FAILED, the order invalidated and off the book, its reservation released', async (t) => {
  const yes = w.yes.toBase58();
  // Alice revokes her YES allowance: her SELL rests with a warning, and fails at settlement.
  const ata = getAssociatedTokenAddressSync(w.yes, w.alice.publicKey);
  t.falsy(w.chain.dev.send([createRevokeInstruction(ata, w.alice.publicKey)], [w.alice]).err);
  const before = snapshot();
  const channel = await WsClient.open(w.node.url, '/ws/user', { authorization: `Bearer ${w.A}` });
  t.teardown(() => channel.ws.terminate());
  await channel.until((m) => m.event_type === 'auth');
  const maker = await place(w.A, order(w.alice, yes, 'SELL', '0.50', '10'));
  t.deepEqual(maker.body.warnings, ['allowance']);
  const makerId = maker.body.orderID;
  const r = await place(w.B, order(w.bob, yes, 'BUY', '0.50', '4', { feeRateBps: 100 }));
  const id = r.body.tradeIDs[0];
  const tr = await settled(id, 'FAILED');
  t.is(tr.status, 'FAILED');
  const open = await until(
    async () => {
      const o = (await call(w.node.url, 'GET', `/v1/open-orders/${makerId}`, { token: w.A })).body;
      return o.status === 'INVALIDATED' ? o : null;
    },
    20_000,
    'the maker order invalidated',
  );
  t.is(open.size_matched, '4');
  // The maker's user channel: the trade MATCHED then FAILED, and her order's placement, fill and invalidation.
  await channel.until((m) => m.event_type === 'trade' && m.id === id && m.status === 'FAILED');
  t.deepEqual(
    channel.messages.filter((m) => m.event_type === 'trade' && m.id === id).map((m) => m.status),
    ['MATCHED', 'FAILED'],
  );
  await channel.until((m) => m.event_type === 'order' && m.id === makerId && m.status === 'INVALIDATED');
  t.is((await call(w.node.url, 'GET', `/v1/orders/${makerId}`, { token: w.A })).status, 404, 'gone from the book');
  // the reservation is released: the wallet holds nothing for the order any more
  await until(
    async () => {
      const [s] = await sql("select state from actor_snapshots where kind = 'wallet' and key = ?", [w.alice.publicKey.toBase58()]);
      return s && !s.state.reservations[makerId];
    },
    20_000,
    'the reservation released',
  );
  // nothing moved but the delegate's transaction fee
  t.deepEqual(delta(before, snapshot()), {});
  const trades = await sql("select seq::int, type from ledger_messages where market = ? and topic = 'trades' order by seq", [
    w.market.condition_id,
  ]);
  t.deepEqual(
    trades.map((m) => m.seq),
    trades.map((_, i) => i + 1),
    'ledger.trades stays gap-free',
  );
  t.is((await tradeMessages(id)).at(-1)!.type, 'trade_failed');
  const [failedAt] = await sql(
    "select at from ledger_messages where market = ? and topic = 'trades' and type = 'trade_failed' and payload->>'trade_id' = ?",
    [w.market.condition_id, id],
  );
  const [invalidAt] = await sql(
    "select at from ledger_messages where market = ? and topic = 'orders' and type = 'order_invalidated' and payload->>'order_id' = ?",
    [w.market.condition_id, makerId],
  );
  t.true(new Date(failedAt.at).getTime() <= new Date(invalidAt.at).getTime(), 'UpdateTrade(FAILED) first, then the size update');
  const [row] = await sql('select status, reconciled, culprits from settlements where trade_id = ?', [id]);
  t.like(row, { status: 'FAILED', reconciled: true });
  t.deepEqual(row.culprits, [makerId], 'only the maker at fault is invalidated');
  // without the internal token the route refuses
  t.is((await call(w.node.url, 'POST', '/v1/orders/size-update', { body: { trade_id: id, orders: [makerId] } })).status, 403);
});

test.serial('RPC errors on send and on status reads: the stored transaction is sent again and lands once', async (t) => {
  const yes = w.yes.toBase58();
  await w.approveAll(w.alice); // the test before revoked her YES allowance
  await place(w.A, order(w.alice, yes, 'SELL', '0.35', '1'));
  const before = snapshot();
  w.chain.faults.rpcError({ method: 'sendTransaction', count: 2 });
  w.chain.faults.rpcError({ method: 'getSignatureStatuses', count: 2 });
  const r = await place(w.B, order(w.bob, yes, 'BUY', '0.35', '1', { feeRateBps: 100 }));
  const tr = await settled(r.body.tradeIDs[0]);
  const a = await attempts(tr.id);
  t.is(a.length, 1, 'the same signed transaction throughout');
  t.is(tr.transaction_hash, a[0].signature);
  t.true(w.chain.faults.stats.rpcErrors >= 4);
  // 0.35; fee 1% × 0.35 × 1 = 0.0035
  t.deepEqual(delta(before, snapshot()), { 'alice.c': 350_000n, 'alice.yes': -1n * U, 'bob.c': -353_500n, 'bob.yes': 1n * U, fee: 3_500n });
});

test.serial(
  'bounded attempts: compute exhausted every time → RETRYING, then FAILED; the resting orders involved are invalidated',
  async (t) => {
    const yes = w.yes.toBase58();
    const maker = await place(w.A, order(w.alice, yes, 'SELL', '0.65', '10'));
    const before = snapshot();
    w.chain.faults.exhaustCompute(5); // CLOB_SETTLEMENT_MAX_ATTEMPTS defaults to 5
    const r = await place(w.B, order(w.bob, yes, 'BUY', '0.65', '3', { feeRateBps: 100 }));
    const id = r.body.tradeIDs[0];
    const tr = await settled(id, 'FAILED');
    const a = await attempts(id);
    t.is(a.length, 5);
    t.true(a.every((x) => x.outcome === 'out_of_compute'));
    t.deepEqual(
      a.map((x) => x.cu_limit),
      a.map((_, i) => a[0].cu_limit * 2 ** i),
      'the limit doubles each time',
    );
    t.deepEqual(
      a.map((x) => BigInt(x.cu_price)),
      a.map((_, i) => BigInt(a[0].cu_price) * 2n ** BigInt(i)),
      'and so does the fee',
    );
    t.is(tr.transaction_hash, a[4].signature);
    const msgs = await tradeMessages(id);
    t.deepEqual(
      msgs.map((m) => m.type),
      ['trade_matched', 'trade_retrying', 'trade_retrying', 'trade_retrying', 'trade_retrying', 'trade_failed'],
    );
    t.regex(msgs.at(-1)!.payload.reason, /gave up after 5 attempts: out of compute units/);
    // no party to blame: every order of the trade that still rests is invalidated (the maker's 7 left)
    const open = await until(
      async () => {
        const o = (await call(w.node.url, 'GET', `/v1/open-orders/${maker.body.orderID}`, { token: w.A })).body;
        return o.status === 'INVALIDATED' ? o : null;
      },
      20_000,
      'the maker order invalidated',
    );
    t.is(open.size_matched, '3');
    t.is(
      (await call(w.node.url, 'GET', `/v1/open-orders/${r.body.orderID}`, { token: w.B })).body.status,
      'MATCHED',
      'the filled taker order had nothing left to invalidate',
    );
    t.deepEqual(delta(before, snapshot()), {}, 'nothing moved');
  },
);

test.serial('ledger.trades on Kafka and over SSE: every status message once, seq gap-free and in order past 9', async (t) => {
  const { Kafka, logLevel } = await import('kafkajs');
  const { KAFKA_BROKERS } = await import('../../helpers/node.ts');
  const { sse } = await import('../../helpers/sse.ts');
  const { TOPICS } = await import('../../../topics/names.ts');
  const m = w.market.condition_id;
  const stored = await sql("select seq::int, type from ledger_messages where market = ? and topic = 'trades' order by seq", [m]);
  t.true(stored.length >= 10, `${stored.length} messages`);
  for (const type of ['trade_matched', 'trade_mined', 'trade_confirmed', 'trade_retrying', 'trade_failed'])
    t.true(
      stored.some((x) => x.type === type),
      type,
    );
  await until(
    async () => (await sql('select count(*)::int as n from ledger_unpublished where market = ?', [m]))[0].n === 0,
    20_000,
    'the relay',
  );
  const kafka = new Kafka({ brokers: [KAFKA_BROKERS], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `t-settle-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topics: [w.node.config.topicPrefix + TOPICS.ledgerTrades], fromBeginning: true });
  const got: any[] = [];
  await new Promise<void>((resolve) => {
    const stop = setTimeout(resolve, 15_000);
    void consumer.run({
      eachMessage: async ({ message }) => {
        const v = JSON.parse(message.value!.toString());
        if (v.market === m) got.push(v);
        if (got.length >= stored.length) {
          clearTimeout(stop);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  t.deepEqual(
    got.map((x) => [x.seq, x.type]),
    stored.map((x) => [x.seq, x.type]),
  );
  const failed = got.find((x) => x.type === 'trade_failed');
  t.like(failed, { v: 1, status: 'FAILED' });
  t.truthy(failed.trade_id);
  t.regex(failed.reason, /settlement transaction failed/);
  // SSE from the beginning: the trade messages in seq order
  const ac = new AbortController();
  const seen: any[] = [];
  const timer = setTimeout(() => ac.abort(), 10_000);
  for await (const ev of sse(`${w.node.url}/v1/stream?market=${m}&from=beginning`, { authorization: `Bearer ${w.B}` }, ac.signal)) {
    const x = JSON.parse(ev.data);
    if (x.topic === 'ledger.trades') seen.push(x.seq);
    if (seen.length >= stored.length) break;
  }
  clearTimeout(timer);
  ac.abort();
  t.deepEqual(
    seen,
    stored.map((x) => x.seq),
  );
});

// The executor killed mid-way settles each trade exactly once (issue 5): a node process is
// SIGKILLed right after sending a settlement transaction (landed, not yet recorded as MINED), the
// next one right before sending a stored one; the node after them derives what to do from the
// chain's record of the stored signatures.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { startProcessNode, type ProcessNode } from '../../helpers/process-node.ts';
import { call, JWT_SECRET } from '../../helpers/node.ts';
import { bearer, createMarket, order } from '../../helpers/clob.ts';
import { settlementWorld, tradeOf, until, U } from '../../helpers/settlement-world.ts';
import { escrowOf } from '../../../src/chain/settlement-tx.ts';
import { approve } from '../../helpers/chain-market.ts';
import { Keypair, VersionedTransaction } from '@solana/web3.js';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import pg from 'pg';

test('an executor SIGKILLed between send and confirm settles each trade exactly once', async (t) => {
  const w = await settlementWorld({}, { startNode: false });
  const nodes: ProcessNode[] = [];
  t.teardown(async () => {
    for (const n of nodes) await n.kill();
    await w.close();
  });
  await w.approveAll(w.alice);
  await w.approveAll(w.bob);
  const env = {
    ...w.nodeEnv,
    TOPIC_PREFIX: `t${randomBytes(4).toString('hex')}.`,
    TOPIC_PARTITIONS: '4',
    PLATFORM_JWT_SECRET: JWT_SECRET,
    ASK_TIMEOUT_MS: '15000',
    LOG_LEVEL: 'warn',
  };
  const db = new pg.Client({ connectionString: w.dbUrl });
  await db.connect();
  t.teardown(() => db.end());
  const sql = async (q: string, p: unknown[] = []) => (await db.query(q, p)).rows;

  // 1. killed right after the send: the transaction landed, the database does not know yet
  const first = await startProcessNode({ ...env, NODE_ID: 'first', SETTLEMENT_CRASH_POINT: 'after-send:1' });
  nodes.push(first);
  const market = await createMarket(first.url, {
    yes_token_id: w.yes.toBase58(),
    no_token_id: w.no.toBase58(),
    taker_fee_bps: 100,
    min_size: '1',
  });
  const m = market.condition_id;
  const yes = w.yes.toBase58();
  const [A, B] = [await bearer(first.url, w.alice), await bearer(first.url, w.bob)];
  const place = (url: string, tok: string, o: any) => call(url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType: 'GTC' } });
  const c0 = {
    alice: w.bal(w.alice.publicKey, w.collateral),
    bob: w.bal(w.bob.publicKey, w.collateral),
    fee: w.bal(w.feeRecipient.publicKey, w.collateral),
  };
  await place(first.url, A, order(w.alice, yes, 'SELL', '0.40', '4'));
  const r1 = await place(first.url, B, order(w.bob, yes, 'BUY', '0.40', '4', { feeRateBps: 100 }));
  t.is(r1.body.status, 'matched', JSON.stringify(r1.body));
  const id1 = r1.body.tradeIDs[0];
  await first.exited;
  t.regex(first.output(), /SETTLEMENT_CRASH_POINT reached/);
  const [a1] = await sql('select signature from settlement_attempts where trade_id = $1', [id1]);
  t.is((await w.chain.connection().getSignatureStatus(a1.signature)).value?.err, null, 'it landed before the kill');
  t.is(
    (await sql('select status from settlements where trade_id = $1', [id1]))[0].status,
    'MATCHED',
    'the executor died before recording it',
  );
  t.is(w.bal(w.bob.publicKey, w.yes), 104n * U);

  // 2. killed right before sending a stored transaction (trade 2); trade 1 is found landed, not re-sent
  const second = await startProcessNode({ ...env, NODE_ID: 'second', SETTLEMENT_CRASH_POINT: 'before-send:1' });
  nodes.push(second);
  await until(
    async () => (await sql('select status from settlements where trade_id = $1', [id1]))[0].status === 'CONFIRMED',
    60_000,
    'trade 1 confirmed',
  );
  await place(second.url, A, order(w.alice, yes, 'SELL', '0.45', '2'));
  const r2 = await place(second.url, B, order(w.bob, yes, 'BUY', '0.45', '2', { feeRateBps: 100 }));
  t.is(r2.body.status, 'matched', JSON.stringify(r2.body));
  const id2 = r2.body.tradeIDs[0];
  await second.exited;
  t.regex(second.output(), /SETTLEMENT_CRASH_POINT reached/);
  const [a2] = await sql('select signature from settlement_attempts where trade_id = $1', [id2]);
  t.is((await w.chain.connection().getSignatureStatus(a2.signature)).value, null, 'stored, never sent');

  // 3. the next node sends the stored bytes: trade 2 lands once
  const third = await startProcessNode({ ...env, NODE_ID: 'third' });
  nodes.push(third);
  const B3 = await bearer(third.url, w.bob);
  const t2 = await until(
    async () => {
      const x = await tradeOf(third.url, B3, m, id2);
      return x?.status === 'CONFIRMED' ? x : null;
    },
    60_000,
    'trade 2 confirmed',
  );
  const t1 = await tradeOf(third.url, B3, m, id1);
  t.is(t1.status, 'CONFIRMED');
  t.is(t1.transaction_hash, a1.signature);
  t.is(t2.transaction_hash, a2.signature);
  for (const id of [id1, id2])
    t.is(
      (await sql('select count(*)::int as n from settlement_attempts where trade_id = $1', [id]))[0].n,
      1,
      'one signed transaction per trade',
    );
  // exactly once: 1.6 + 0.9 collateral to Alice; Bob pays that plus fees 0.016 + 0.011 (1% × 0.45 × 2 = 0.009)
  t.is(w.bal(w.alice.publicKey, w.collateral) - c0.alice, 2_500_000n);
  t.is(c0.bob - w.bal(w.bob.publicKey, w.collateral), 2_500_000n + 16_000n + 9_000n);
  t.is(w.bal(w.feeRecipient.publicKey, w.collateral) - c0.fee, 25_000n);
  t.is(w.bal(w.bob.publicKey, w.yes), 106n * U);
  t.is(w.bal(w.alice.publicKey, w.yes), 94n * U);
  t.is(w.chain.tokenBalance(escrowOf({ collateralMint: w.collateral, delegate: w.delegate.publicKey })), 0n);
  const msgs = await sql("select seq::int, type, payload, at from ledger_messages where market = $1 and topic = 'trades' order by seq", [
    m,
  ]);
  t.deepEqual(
    msgs.map((x) => x.seq),
    msgs.map((_, i) => i + 1),
  );
  for (const id of [id1, id2]) {
    t.deepEqual(
      msgs.filter((x) => (x.payload.trade?.id ?? x.payload.trade_id) === id).map((x) => x.type),
      ['trade_matched', 'trade_mined', 'trade_confirmed'],
    );
  }
});

test('an executor SIGKILLed right after sending the preparatory transactions: the next node settles the trade once', async (t) => {
  const w = await settlementWorld({}, { startNode: false });
  const nodes: ProcessNode[] = [];
  t.teardown(async () => {
    for (const n of nodes) await n.kill();
    await w.close();
  });
  const env = {
    ...w.nodeEnv,
    TOPIC_PREFIX: `t${randomBytes(4).toString('hex')}.`,
    TOPIC_PARTITIONS: '4',
    PLATFORM_JWT_SECRET: JWT_SECRET,
    ASK_TIMEOUT_MS: '15000',
    LOG_LEVEL: 'warn',
  };
  const db = new pg.Client({ connectionString: w.dbUrl });
  await db.connect();
  t.teardown(() => db.end());
  const sql = async (q: string, p: unknown[] = []) => (await db.query(q, p)).rows;
  // fresh wallets: a seller holding only YES (no collateral account), a buyer holding only collateral (no YES account)
  const seller = Keypair.generate();
  w.chain.chain.airdrop(seller.publicKey, 10n ** 9n);
  const sellerYes = getAssociatedTokenAddressSync(w.yes, seller.publicKey);
  const minted = w.chain.dev.send(
    [
      createAssociatedTokenAccountIdempotentInstruction(w.delegate.publicKey, sellerYes, seller.publicKey, w.yes),
      createMintToInstruction(w.yes, sellerYes, w.delegate.publicKey, 5n * U),
    ],
    [w.delegate],
  );
  t.is(minted.err, null);
  await approve(w.chain, seller, w.yes, w.delegate.publicKey, 10n ** 12n);
  const buyer = Keypair.generate();
  await w.chain.fundWallet(buyer.publicKey, 10n ** 9n, 10n * U);
  await approve(w.chain, buyer, w.collateral, w.delegate.publicKey, 10n ** 12n);
  t.is(w.account(seller.publicKey, w.collateral), null);
  t.is(w.account(buyer.publicKey, w.yes), null);

  // 1. killed right after sending the preparatory transactions: no settlement attempt was made
  const first = await startProcessNode({ ...env, NODE_ID: 'first', SETTLEMENT_CRASH_POINT: 'after-prepare:1' });
  nodes.push(first);
  const market = await createMarket(first.url, {
    yes_token_id: w.yes.toBase58(),
    no_token_id: w.no.toBase58(),
    taker_fee_bps: 100,
    min_size: '1',
  });
  const yes = w.yes.toBase58();
  const place = (url: string, tok: string, o: any) => call(url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType: 'GTC' } });
  t.is((await place(first.url, await bearer(first.url, seller), order(seller, yes, 'SELL', '0.40', '3'))).body.status, 'live');
  const r = await place(first.url, await bearer(first.url, buyer), order(buyer, yes, 'BUY', '0.40', '3', { feeRateBps: 100 }));
  t.is(r.body.status, 'matched', JSON.stringify(r.body));
  const id = r.body.tradeIDs[0];
  await first.exited;
  t.regex(first.output(), /SETTLEMENT_CRASH_POINT reached \(after-prepare:1\)/);
  t.is(
    (await sql('select count(*)::int as n from settlement_attempts where trade_id = $1', [id]))[0].n,
    0,
    'no settlement attempt before the accounts exist',
  );
  t.is((await sql('select status from settlements where trade_id = $1', [id]))[0].status, 'MATCHED');
  await until(
    () => w.account(seller.publicKey, w.collateral) && w.account(buyer.publicKey, w.yes),
    10_000,
    'the preparatory transactions landed',
  );

  // 2. the next node: the accounts exist, it settles with one transaction that creates none
  const second = await startProcessNode({ ...env, NODE_ID: 'second' });
  nodes.push(second);
  const B = await bearer(second.url, buyer);
  const tr = await until(
    async () => {
      const x = await tradeOf(second.url, B, market.condition_id, id);
      return x?.status === 'CONFIRMED' ? x : null;
    },
    60_000,
    'trade confirmed',
  );
  const attempts = await sql('select tx from settlement_attempts where trade_id = $1', [id]);
  t.is(attempts.length, 1, 'one signed settlement transaction');
  const m = VersionedTransaction.deserialize(Buffer.from(attempts[0].tx, 'base64')).message;
  t.false(m.compiledInstructions.some((ci) => m.staticAccountKeys[ci.programIdIndex].equals(ASSOCIATED_TOKEN_PROGRAM_ID)));
  t.is(tr.transaction_hash, (await sql('select signature from settlement_attempts where trade_id = $1', [id]))[0].signature);
  // 3 YES at 0.40 = 1.2; fee 1% × 0.4 × 3 = 0.012
  t.is(w.bal(seller.publicKey, w.collateral), 1_200_000n);
  t.is(w.bal(seller.publicKey, w.yes), 2n * U);
  t.is(w.bal(buyer.publicKey, w.yes), 3n * U);
  t.is(w.bal(buyer.publicKey, w.collateral), 10n * U - 1_200_000n - 12_000n);
  t.is(w.bal(w.feeRecipient.publicKey, w.collateral), 12_000n);
});

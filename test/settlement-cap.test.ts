// The maker cap (CLOB_MAX_MAKERS_PER_TRADE, default 3) against the local chain, PostgreSQL and
// Kafka: a taker sweep across exactly the cap's number of fresh wallets — whose receiving token
// accounts the settlement transaction must create — settles CONFIRMED in one transaction with exact
// balances, and a maker past the cap is not taken (the taker's crossed remainder is cancelled).
import test from 'ava';
import { Keypair, VersionedTransaction, type PublicKey } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, createAssociatedTokenAccountIdempotentInstruction, createMintToInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { DEFAULT_MAX_MAKERS_PER_TRADE } from '../src/config.ts';
import { escrowOf } from '../src/chain/settlement-tx.ts';
import { approve } from './helpers/chain-market.ts';
import { bearer, order } from './helpers/clob.ts';
import { call } from './helpers/node.ts';
import { settlementWorld, tradeOf, until, U, type SettlementWorld } from './helpers/settlement-world.ts';

let w: SettlementWorld;

test.before(async () => { w = await settlementWorld(); });
test.after.always(async () => { await w?.close(); });

const CAP = DEFAULT_MAX_MAKERS_PER_TRADE;
const place = (tok: string, o: any, orderType = 'GTC') => call(w.node.url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType } });
const sql = (q: string, p: unknown[] = []) => (w.node.orm.em.fork() as any).execute(q, p) as Promise<any[]>;
const settled = (tok: string, tradeId: string) => until(async () => {
  const t = await tradeOf(w.node.url, tok, w.market.condition_id, tradeId);
  return t?.status === 'CONFIRMED' ? t : null;
}, 30_000, `trade ${tradeId} CONFIRMED`);

interface Wallet { kp: Keypair; pk: PublicKey; tok: string; orderId?: string }

/** A fresh wallet holding only what it is given (and SOL for its own approvals), allowances set on those. */
async function wallet(o: { collateral?: bigint; yes?: bigint }): Promise<Wallet> {
  const kp = Keypair.generate();
  if (o.collateral) {
    await w.chain.fundWallet(kp.publicKey, 10n ** 9n, o.collateral);
    await approve(w.chain, kp, w.collateral, w.delegate.publicKey, 10n ** 12n);
  } else {
    w.chain.chain.airdrop(kp.publicKey, 10n ** 9n); // no collateral account at all
  }
  if (o.yes) {
    // the delegate is the outcome mints' authority in this world
    const ata = getAssociatedTokenAddressSync(w.yes, kp.publicKey);
    const res = w.chain.dev.send([
      createAssociatedTokenAccountIdempotentInstruction(w.delegate.publicKey, ata, kp.publicKey, w.yes),
      createMintToInstruction(w.yes, ata, w.delegate.publicKey, o.yes),
    ], [w.delegate]);
    if (res.err) throw new Error(`minting YES failed: ${JSON.stringify(res.err)}`);
    await approve(w.chain, kp, w.yes, w.delegate.publicKey, 10n ** 12n);
  }
  return { kp, pk: kp.publicKey, tok: await bearer(w.node.url, kp) };
}

/** The trade's one settlement transaction: its size and how many token accounts it created. */
async function settlementTx(tradeId: string) {
  const a = await sql('select tx from settlement_attempts where trade_id = ? order by attempt', [tradeId]);
  const raw = Buffer.from(a.at(-1).tx, 'base64');
  const m = VersionedTransaction.deserialize(raw).message;
  const creates = m.compiledInstructions.filter((ci) => m.staticAccountKeys[ci.programIdIndex].equals(ASSOCIATED_TOKEN_PROGRAM_ID)).length;
  return { attempts: a.length, bytes: raw.length, creates };
}

async function takerRemainder(orderId: string) {
  const [m] = await sql("select payload from ledger_messages where market = ? and topic = 'orders' and type = 'order_cancelled' and payload->>'order_id' = ?", [w.market.condition_id, orderId]);
  return m?.payload ?? null;
}

test.serial(`MINT across exactly ${CAP} fresh makers (every receiving account created) settles CONFIRMED; the maker past the cap is not taken`, async (t) => {
  const yes = w.yes.toBase58();
  const no = w.no.toBase58();
  t.is(CAP, 3);
  // CAP + 1 makers bid NO at 0.30 (1, 2, 3, 4 tokens): YES asks at 0.70 for a YES buyer, through a MINT.
  const makers: Wallet[] = [];
  for (let i = 0; i <= CAP; i++) {
    const m = await wallet({ collateral: 10n * U });
    const p = await place(m.tok, order(m.kp, no, 'BUY', '0.30', String(i + 1)));
    t.is(p.body.status, 'live');
    m.orderId = p.body.orderID;
    makers.push(m);
  }
  const taker = await wallet({ collateral: 100n * U });
  for (const m of makers) t.is(w.account(m.pk, w.no), null, 'no NO account yet');
  t.is(w.account(taker.pk, w.yes), null, 'no YES account yet');
  const escrow = escrowOf({ collateralMint: w.collateral, delegate: w.delegate.publicKey });
  const before = { escrow: w.chain.tokenBalance(escrow), fee: w.bal(w.feeRecipient.publicKey, w.collateral) };

  const r = await place(taker.tok, order(taker.kp, yes, 'BUY', '0.70', '10', { feeRateBps: 100 }));
  t.is(r.status, 200);
  t.is(r.body.status, 'matched');
  t.is(r.body.tradeIDs.length, 1);
  const tr = await settled(taker.tok, r.body.tradeIDs[0]);
  t.is(tr.match_type, 'MINT');
  t.deepEqual(tr.maker_orders.map((m: any) => m.owner), makers.slice(0, CAP).map((m) => m.pk.toBase58()), 'the first CAP makers, in time priority');
  t.is(tr.size, '6');

  // 6 YES at 0.70 = 4.2 from the taker, fee 1% × min(0.7, 0.3) × 6 = 0.018; the makers pay 0.3 each
  t.is(w.bal(taker.pk, w.collateral), 100n * U - 4_200_000n - 18_000n);
  t.is(w.bal(taker.pk, w.yes), 6n * U);
  makers.slice(0, CAP).forEach((m, i) => {
    t.is(w.bal(m.pk, w.collateral), 10n * U - BigInt(i + 1) * 300_000n);
    t.is(w.bal(m.pk, w.no), BigInt(i + 1) * U);
  });
  t.is(w.chain.tokenBalance(escrow) - before.escrow, 6n * U, 'a pair per token: 4.2 + 1.8');
  t.is(w.bal(w.feeRecipient.publicKey, w.collateral) - before.fee, 18_000n);

  const tx = await settlementTx(tr.id);
  t.log(`${CAP} makers, ${tx.creates} token accounts created: ${tx.bytes} bytes`);
  t.is(tx.attempts, 1);
  t.true(tx.creates >= CAP + 1, 'each maker\'s NO account and the taker\'s YES account created in the same transaction');
  t.true(tx.bytes <= 1232);

  // the maker past the cap: untouched, still resting; the taker's remainder (4) would have rested
  // crossed against it, so it is cancelled
  const last = makers[CAP];
  t.is(w.account(last.pk, w.no), null);
  t.is(w.bal(last.pk, w.collateral), 10n * U);
  t.like((await call(w.node.url, 'GET', `/v1/open-orders/${last.orderId}`, { token: last.tok })).body, { status: 'LIVE', size_matched: '0' });
  t.like(await until(() => takerRemainder(r.body.orderID), 10_000, 'the taker remainder cancelled'), { reason: 'would_cross', size_matched: '6' });
});

test.serial(`COMPLEMENTARY: a taker facing ${CAP + 2} sellers gets ${CAP} fills, settled with exact balances`, async (t) => {
  const yes = w.yes.toBase58();
  // fresh sellers holding only YES: their collateral accounts are created by the settlement
  const sellers: Wallet[] = [];
  for (let i = 0; i < CAP + 2; i++) {
    const s = await wallet({ yes: 5n * U });
    t.is((await place(s.tok, order(s.kp, yes, 'SELL', '0.40', '2'))).body.status, 'live');
    sellers.push(s);
  }
  const taker = await wallet({ collateral: 50n * U });
  const r = await place(taker.tok, order(taker.kp, yes, 'BUY', '0.40', String(2 * (CAP + 2)), { feeRateBps: 100 }));
  t.is(r.body.status, 'matched');
  const tr = await settled(taker.tok, r.body.tradeIDs[0]);
  t.is(tr.match_type, 'COMPLEMENTARY');
  t.is(tr.maker_orders.length, CAP);
  // 2 × CAP YES at 0.40, fee 1% × 0.4 × 2 × CAP
  const n = BigInt(CAP);
  t.is(w.bal(taker.pk, w.yes), 2n * n * U);
  t.is(w.bal(taker.pk, w.collateral), 50n * U - 800_000n * n - 8_000n * n);
  sellers.forEach((s, i) => {
    t.is(w.bal(s.pk, w.yes), i < CAP ? 3n * U : 5n * U);
    t.is(w.bal(s.pk, w.collateral), i < CAP ? 800_000n : 0n);
    t.is(w.account(s.pk, w.collateral) === null, i >= CAP, 'a collateral account only for those filled');
  });
  const tx = await settlementTx(tr.id);
  t.is(tx.attempts, 1);
  t.true(tx.creates >= CAP + 1);
  t.like(await until(() => takerRemainder(r.body.orderID), 10_000, 'the taker remainder cancelled'), { reason: 'would_cross', size_matched: String(2 * CAP) });
});

// The maker caps (CLOB_MAX_MAKERS_PER_TRADE, default 9, for COMPLEMENTARY trades;
// CLOB_MAX_MAKERS_PER_MINT_MERGE_TRADE, default 6, for MINT/MERGE) against the local chain,
// PostgreSQL and Kafka: a taker sweep across exactly the cap's number of fresh wallets — whose
// receiving token accounts do not exist, so the executor creates them first in preparatory
// transactions — settles CONFIRMED in one transaction with exact balances, and a maker past the
// cap is taken in a further trade of the same type (the cap splits the execution, it does not
// stop the sweep), settled in its own transaction. The preparatory step run again (as a node
// killed after sending it would) changes nothing.
import test from 'ava';
import { Keypair, VersionedTransaction, type PublicKey } from '@solana/web3.js';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { DEFAULT_MAX_MAKERS_PER_MINT_MERGE_TRADE, DEFAULT_MAX_MAKERS_PER_TRADE } from '../../../src/config.ts';
import { ataOf, escrowOf } from '../../../src/chain/settlement-tx.ts';
import { sendAccountCreations } from '../../../src/settlement/executor.ts';
import { approve } from '../../helpers/chain-market.ts';
import { bearer, order } from '../../helpers/clob.ts';
import { call } from '../../helpers/node.ts';
import { settlementWorld, tradeOf, until, U, type SettlementWorld } from '../../helpers/settlement-world.ts';

let w: SettlementWorld;

test.before(async () => {
  w = await settlementWorld();
});
test.after.always(async () => {
  await w?.close();
});

const CAP = DEFAULT_MAX_MAKERS_PER_TRADE;
const CAP_MM = DEFAULT_MAX_MAKERS_PER_MINT_MERGE_TRADE;
const place = (tok: string, o: any, orderType = 'GTC') =>
  call(w.node.url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType } });
const sql = (q: string, p: unknown[] = []) => (w.node.orm.em.fork() as any).execute(q, p) as Promise<any[]>;
const settled = (tok: string, tradeId: string) =>
  until(
    async () => {
      const t = await tradeOf(w.node.url, tok, w.market.condition_id, tradeId);
      return t?.status === 'CONFIRMED' ? t : null;
    },
    30_000,
    `trade ${tradeId} CONFIRMED`,
  );

interface Wallet {
  kp: Keypair;
  pk: PublicKey;
  tok: string;
  orderId?: string;
}

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
    const res = w.chain.dev.send(
      [
        createAssociatedTokenAccountIdempotentInstruction(w.delegate.publicKey, ata, kp.publicKey, w.yes),
        createMintToInstruction(w.yes, ata, w.delegate.publicKey, o.yes),
      ],
      [w.delegate],
    );
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
  const [m] = await sql(
    "select payload from ledger_messages where market = ? and topic = 'orders' and type = 'order_cancelled' and payload->>'order_id' = ?",
    [w.market.condition_id, orderId],
  );
  return m?.payload ?? null;
}

test.serial(
  `MINT across exactly ${CAP_MM} fresh makers (every receiving account created beforehand) settles CONFIRMED; the maker past the cap goes to a second MINT trade`,
  async (t) => {
    const yes = w.yes.toBase58();
    const no = w.no.toBase58();
    t.is(CAP_MM, 6);
    // CAP_MM + 1 makers bid NO at 0.30 (1, 2, …, 7 tokens): YES asks at 0.70 for a YES buyer, through a MINT.
    const makers: Wallet[] = [];
    for (let i = 0; i <= CAP_MM; i++) {
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

    // the first CAP_MM makers hold S = 1 + 2 + … + CAP_MM = 21 NO bids; the taker asks for S + CAP_MM + 1
    const S = BigInt((CAP_MM * (CAP_MM + 1)) / 2);
    const r = await place(taker.tok, order(taker.kp, yes, 'BUY', '0.70', String(S + BigInt(CAP_MM + 1)), { feeRateBps: 100 }));
    t.is(r.status, 200);
    t.is(r.body.status, 'matched');
    t.is(r.body.tradeIDs.length, 2, 'the cap splits the execution into two MINT trades');
    t.deepEqual(r.body.tradeIDs, [r.body.tradeIDs[0], `${r.body.tradeIDs[0]}:1`]);
    const tr = await settled(taker.tok, r.body.tradeIDs[0]);
    t.is(tr.match_type, 'MINT');
    t.deepEqual(
      tr.maker_orders.map((m: any) => m.owner),
      makers.slice(0, CAP_MM).map((m) => m.pk.toBase58()),
      'the first CAP_MM makers, in time priority',
    );
    t.is(tr.size, String(S));
    const last = makers[CAP_MM];
    const L = BigInt(CAP_MM + 1); // the last maker's size
    const tr2 = await settled(taker.tok, r.body.tradeIDs[1]);
    t.is(tr2.match_type, 'MINT');
    t.deepEqual(
      tr2.maker_orders.map((m: any) => m.owner),
      [last.pk.toBase58()],
      'the maker past the cap, in a trade of its own',
    );
    t.is(tr2.size, String(L));

    // S + L YES at 0.70 = 0.7 (S + L) from the taker, fee 1% × min(0.7, 0.3) × (S + L) = 0.003 (S + L); the makers pay 0.3 each
    t.is(w.bal(taker.pk, w.collateral), 100n * U - 700_000n * (S + L) - 3_000n * (S + L));
    t.is(w.bal(taker.pk, w.yes), (S + L) * U);
    makers.forEach((m, i) => {
      t.is(w.bal(m.pk, w.collateral), 10n * U - BigInt(i + 1) * 300_000n);
      t.is(w.bal(m.pk, w.no), BigInt(i + 1) * U);
    });
    t.is(w.chain.tokenBalance(escrow) - before.escrow, (S + L) * U, 'a pair per token: 0.7 + 0.3 per token');
    t.is(w.bal(w.feeRecipient.publicKey, w.collateral) - before.fee, 3_000n * (S + L));

    const tx = await settlementTx(tr.id);
    t.log(`${CAP_MM} makers, ${tx.creates} token accounts created in the settlement: ${tx.bytes} bytes`);
    t.is(tx.attempts, 1);
    t.is(tx.creates, 0, "each maker's NO account and the taker's YES account were created before, not in the settlement");
    t.true(tx.bytes <= 1232);

    // the maker past the cap: filled by the second trade; the taker is filled whole, nothing cancelled
    t.like((await call(w.node.url, 'GET', `/v1/open-orders/${last.orderId}`, { token: last.tok })).body, {
      status: 'MATCHED',
      size_matched: String(L),
    });
    t.like((await call(w.node.url, 'GET', `/v1/open-orders/${r.body.orderID}`, { token: taker.tok })).body, {
      status: 'MATCHED',
      size_matched: String(S + L),
    });
    t.is(await takerRemainder(r.body.orderID), null);
  },
);

test.serial(
  `COMPLEMENTARY: a taker facing ${CAP + 2} sellers gets a trade of ${CAP} fills and one of 2, settled with exact balances`,
  async (t) => {
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
    t.is(r.body.tradeIDs.length, 2);
    const tr = await settled(taker.tok, r.body.tradeIDs[0]);
    t.is(tr.match_type, 'COMPLEMENTARY');
    t.is(tr.maker_orders.length, CAP);
    const tr2 = await settled(taker.tok, r.body.tradeIDs[1]);
    t.is(tr2.id, `${tr.id}:1`);
    t.is(tr2.match_type, 'COMPLEMENTARY');
    t.deepEqual(
      tr2.maker_orders.map((m: any) => m.owner),
      sellers.slice(CAP).map((s) => s.pk.toBase58()),
      'the sellers past the cap, in time priority',
    );
    // 2 × (CAP + 2) YES at 0.40, fee 1% × 0.4 × 2 per seller
    const n = BigInt(CAP + 2);
    t.is(w.bal(taker.pk, w.yes), 2n * n * U);
    t.is(w.bal(taker.pk, w.collateral), 50n * U - 800_000n * n - 8_000n * n);
    sellers.forEach((s) => {
      t.is(w.bal(s.pk, w.yes), 3n * U);
      t.is(w.bal(s.pk, w.collateral), 800_000n);
    });
    const tx = await settlementTx(tr.id);
    t.log(`${CAP} makers, ${tx.creates} token accounts created in the settlement: ${tx.bytes} bytes`);
    t.is(tx.attempts, 1);
    t.is(tx.creates, 0, "the sellers' collateral accounts and the taker's YES account were created before, not in the settlement");
    t.true(tx.bytes <= 1232);
    t.is(w.account(taker.pk, w.yes)!.amount, 2n * n * U);
    t.is(await takerRemainder(r.body.orderID), null, 'filled whole: nothing cancelled');
  },
);

test.serial('the preparatory step run again (a node killed after sending it) is harmless: nothing moves, nothing is reset', async (t) => {
  const conn = w.chain.connection();
  const owner = await wallet({ yes: 5n * U }); // a YES account with 5 and an allowance; no collateral, no NO account
  const missing = [w.collateral, w.no].map((mint) => ({ account: ataOf(mint, owner.pk), owner: owner.pk, mint }));
  const yesBefore = w.account(owner.pk, w.yes);
  const lamports = async () => ({
    owner: await conn.getBalance(owner.pk, 'confirmed'),
    delegate: await conn.getBalance(w.delegate.publicKey, 'confirmed'),
  });
  const l0 = await lamports();

  const first = await sendAccountCreations(conn, w.delegate, missing, { cuPrice: 1000n });
  const landed = async (sigs: string[]) =>
    until(
      async () => {
        const st = (await conn.getSignatureStatuses(sigs, { searchTransactionHistory: true })).value;
        return st.every((x) => x !== null) ? st : null;
      },
      10_000,
      'preparatory transactions landed',
    );
  for (const st of await landed(first.signatures)) t.is(st!.err, null);
  t.deepEqual(w.account(owner.pk, w.collateral), { amount: 0n, delegate: null, delegatedAmount: 0n });
  t.deepEqual(w.account(owner.pk, w.no), { amount: 0n, delegate: null, delegatedAmount: 0n });
  const l1 = await lamports();
  const rent = (await conn.getMinimumBalanceForRentExemption(165)) * 2;
  t.true(l0.delegate - l1.delegate >= rent, "the delegate paid the two accounts' rent");

  // the next node knows nothing of what the dead one sent: it sends the same creations again,
  // and one more account's (already existing, holding tokens under an allowance) along with them
  const again = await sendAccountCreations(
    conn,
    w.delegate,
    [...missing, { account: ataOf(w.yes, owner.pk), owner: owner.pk, mint: w.yes }],
    { cuPrice: 1000n },
  );
  t.notDeepEqual(again.signatures, first.signatures);
  for (const st of await landed(again.signatures)) t.is(st!.err, null, 'CreateIdempotent of existing accounts succeeds');
  t.deepEqual(w.account(owner.pk, w.yes), yesBefore, 'the YES account keeps its tokens and its allowance');
  t.deepEqual(w.account(owner.pk, w.collateral), { amount: 0n, delegate: null, delegatedAmount: 0n });
  t.deepEqual(w.account(owner.pk, w.no), { amount: 0n, delegate: null, delegatedAmount: 0n });
  const l2 = await lamports();
  t.is(l2.owner, l0.owner, 'the owner pays nothing');
  t.true(l1.delegate - l2.delegate < rent / 2, `the repeat cost the delegate only the fee (${l1.delegate - l2.delegate} lamports)`);

  // and a trade crediting those accounts still settles once, with exact balances
  const taker = await wallet({ collateral: 10n * U });
  // (the earlier tests left no ask resting)
  t.is((await place(owner.tok, order(owner.kp, w.yes.toBase58(), 'SELL', '0.35', '2'))).body.status, 'live');
  const r = await place(taker.tok, order(taker.kp, w.yes.toBase58(), 'BUY', '0.35', '2', { feeRateBps: 100 }));
  t.is(r.body.status, 'matched');
  const tr = await settled(taker.tok, r.body.tradeIDs[0]);
  t.deepEqual(
    tr.maker_orders.map((m: any) => m.owner),
    [owner.pk.toBase58()],
  );
  t.is((await settlementTx(tr.id)).attempts, 1);
  t.is(w.bal(owner.pk, w.collateral), 700_000n);
  t.is(w.bal(owner.pk, w.yes), 3n * U);
  t.is(w.bal(taker.pk, w.yes), 2n * U);
  t.is(w.bal(taker.pk, w.collateral), 10n * U - 700_000n - 7_000n);
});

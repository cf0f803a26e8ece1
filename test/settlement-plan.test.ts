// Pure parts of settlement: the per-trade plan's amounts (legs sum to the notional, fee placement),
// the compute budget it carries, the size of the worst trade the book's maker cap allows, and the
// book's UpdateTrade decision (no chain, no database).
import test from 'ava';
import { Keypair, PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { decodeInstruction, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { budgetOf, estimateComputeUnits, planSettlement, signWithBudget, type SettlementTrade } from '../src/chain/settlement-tx.ts';
import { DEFAULT_MAX_MAKERS_PER_TRADE, loadConfig } from '../src/config.ts';
import { outOfCompute } from '../src/settlement/executor.ts';
import { marketBookDecider } from '../actors/market-book/index.ts';

const pk = () => Keypair.generate().publicKey;
const accounts = { collateralMint: pk(), delegate: pk(), feeRecipient: pk() };

/** token instructions as [kind, amount] */
function moves(ixs: TransactionInstruction[]) {
  return ixs.filter((ix) => ix.programId.equals(TOKEN_PROGRAM_ID)).map((ix) => {
    const d: any = decodeInstruction(ix);
    return [d.type ?? d.data.instruction, BigInt(d.data.amount)] as [number, bigint];
  });
}

test('legs at several prices sum exactly to the notional; a SELL taker pays its fee out of its proceeds', (t) => {
  const yes = pk().toBase58();
  const legs = [333_333n, 333_333n, 333_334n].map((q, i) => ({ order_id: `m${i}`, owner: pk().toBase58(), matched_amount: String(q), price: 410_000 + i * 10_000, asset_id: yes, side: 'BUY' as const }));
  const notional = (333_333n * 410_000n + 333_333n * 420_000n + 333_334n * 430_000n) / 1_000_000n;
  const trade: SettlementTrade = { id: 't', taker_order_id: 'tk', asset_id: yes, side: 'SELL', owner: pk().toBase58(), notional: notional.toString(), fee: '4200', match_type: 'COMPLEMENTARY', maker_orders: legs };
  const plan = planSettlement(trade, accounts, () => true);
  const m = moves(plan.instructions);
  // per leg: tokens to the maker, then its collateral to the taker; the fee (4200) from the first
  // maker's payment. Taker parts by cumulative floor: 136666, 140000, 143334 = 420000 = notional.
  t.is(notional, 420_000n);
  t.deepEqual(m.map((x) => x[1]), [333_333n, 136_666n - 4200n, 4200n, 333_333n, 140_000n, 333_334n, 143_334n]);
  t.deepEqual(plan.blame.slice(0, 3), ['tk', 'm0', 'm0']);
  t.throws(() => planSettlement({ ...trade, notional: String(notional + 1n) }, accounts), { message: /notional/ });
});

test('the signed transaction carries its compute-unit limit and price', (t) => {
  const payer = Keypair.generate();
  const s = signWithBudget(payer, [], { blockhash: new PublicKey(new Uint8Array(32).fill(7)).toBase58(), cuLimit: 42_000, cuPrice: 2_000n });
  t.deepEqual(budgetOf(s.tx), { cuLimit: 42_000, cuPrice: 2_000n });
  t.true(outOfCompute({ InstructionError: [3, 'ProgramFailedToComplete'] } as any, ['Program Tokenkeg… failed: exceeded CUs meter at BPF instruction']));
  t.false(outOfCompute({ InstructionError: [3, { Custom: 4 }] } as any, ['Program log: Error: owner does not match']));
});

test('UpdateTrade: the book records settlement news on its ledger and changes nothing else', (t) => {
  const s = marketBookDecider.initial('0xabc');
  const d = marketBookDecider.decide(s, { type: 'UpdateTrade', tradeId: 't-1', status: 'FAILED', now: 5, transactionHash: 'sig', attempt: 2, reason: 'no allowance' });
  t.deepEqual(d.events, [{ type: 'TradeUpdated', at: 5, tradeId: 't-1', status: 'FAILED', transactionHash: 'sig', attempt: 2, reason: 'no allowance' }]);
  t.deepEqual(d.reply, { ok: true, trade_id: 't-1', status: 'FAILED' });
  const before = JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? String(v) : v instanceof Map ? [...v] : v));
  marketBookDecider.evolve(s, d.events[0]);
  t.is(JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? String(v) : v instanceof Map ? [...v] : v)), before);
  t.like(marketBookDecider.decide(s, { type: 'UpdateTrade', tradeId: 't-1', status: 'BOGUS' as any, now: 5 }).reply, { error: 'INVALID_COMMAND' });
});

/**
 * Serialized size of the signed settlement of a trade with `n` makers, each a distinct wallet, at
 * the taker's effective price `eff`, the taker fee at `rateBps`; `create`: every receiving token
 * account is missing (created in the same transaction). Infinity when it cannot be serialized.
 */
function settlementBytes(n: number, match: 'COMPLEMENTARY' | 'MINT' | 'MERGE', side: 'BUY' | 'SELL', eff: number, rateBps: number, o: { create: boolean; feeApart: boolean }): number {
  const delegate = Keypair.generate();
  const acc = { collateralMint: pk(), delegate: delegate.publicKey, feeRecipient: o.feeApart ? pk() : delegate.publicKey };
  const [yes, no] = [pk().toBase58(), pk().toBase58()];
  const q = 1_234_567n;
  const makerPrice = match === 'COMPLEMENTARY' ? eff : 1_000_000 - eff;
  const makerSide = match === 'COMPLEMENTARY' ? (side === 'BUY' ? 'SELL' : 'BUY') : side;
  const legs = Array.from({ length: n }, (_, i) => ({
    order_id: `m${i}`, owner: pk().toBase58(), matched_amount: q, price: makerPrice, asset_id: match === 'COMPLEMENTARY' ? yes : no, side: makerSide,
  }));
  const fee = (BigInt(rateBps) * BigInt(Math.min(eff, 1_000_000 - eff)) * q * BigInt(n)) / 10_000_000_000n;
  const trade: SettlementTrade = {
    id: 't', taker_order_id: 'tk', asset_id: yes, side, owner: pk().toBase58(), notional: (BigInt(eff) * q * BigInt(n)) / 1_000_000n, fee,
    match_type: match, maker_orders: legs,
  };
  const plan = planSettlement(trade, acc, () => !o.create);
  try {
    const blockhash = new PublicKey(new Uint8Array(32).fill(9)).toBase58();
    return signWithBudget(delegate, plan.instructions, { blockhash, cuLimit: estimateComputeUnits(plan.instructions) * 8, cuPrice: 1_000_000_000n }).raw.length;
  } catch {
    return Infinity;
  }
}

const worst = (n: number, kinds: Array<['COMPLEMENTARY' | 'MINT' | 'MERGE', 'BUY' | 'SELL']>) => {
  let max = 0;
  for (const [match, side] of kinds) {
    for (const eff of [10_000, 300_000, 500_000, 700_000, 990_000]) for (const rate of [0, 100, 10_000]) for (const feeApart of [false, true]) {
      max = Math.max(max, settlementBytes(n, match, side, eff, rate, { create: true, feeApart }));
    }
  }
  return max;
};

test('CLOB_MAX_MAKERS_PER_TRADE: the worst trade at the default cap fits in one transaction, one maker more does not', (t) => {
  const ALL: Array<['COMPLEMENTARY' | 'MINT' | 'MERGE', 'BUY' | 'SELL']> = [['COMPLEMENTARY', 'BUY'], ['COMPLEMENTARY', 'SELL'], ['MINT', 'BUY'], ['MERGE', 'SELL']];
  const cap = DEFAULT_MAX_MAKERS_PER_TRADE;
  t.is(loadConfig({}).maxMakersPerTrade, cap);
  // every maker a distinct wallet, every receiving token account created in the transaction, the
  // fee recipient apart from the delegate or not, any price and fee rate (src/settlement/README.md)
  const atCap = worst(cap, ALL);
  t.log(`worst settlement with ${cap} makers: ${atCap} bytes; with ${cap + 1}: ${worst(cap + 1, ALL)} bytes`);
  t.true(atCap <= 1232, `${atCap} bytes`);
  t.true(worst(cap + 1, [['MINT', 'BUY'], ['MERGE', 'SELL']]) > 1232, 'the default is the largest that is always safe');
  // for reference: COMPLEMENTARY alone fits 5 makers with every account created, and ~9 when they exist
  t.true(worst(5, [['COMPLEMENTARY', 'BUY'], ['COMPLEMENTARY', 'SELL']]) <= 1232);
  t.true(settlementBytes(9, 'COMPLEMENTARY', 'BUY', 500_000, 100, { create: false, feeApart: false }) <= 1232);
});

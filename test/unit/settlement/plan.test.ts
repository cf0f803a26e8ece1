// Pure parts of settlement: the per-trade plan's amounts (legs sum to the notional, fee placement),
// the compute budget it carries, the size of the worst trade the book's maker caps allow, the
// preparatory transactions that create missing token accounts, and the book's UpdateTrade
// decision (no chain, no database).
import test from 'ava';
import { Keypair, PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, decodeInstruction, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import {
  budgetOf,
  estimateComputeUnits,
  MAX_TRANSACTION_BYTES,
  planAccountCreations,
  planSettlement,
  signWithBudget,
  type SettlementTrade,
} from '../../../src/chain/settlement-tx.ts';
import { DEFAULT_MAX_MAKERS_PER_MINT_MERGE_TRADE, DEFAULT_MAX_MAKERS_PER_TRADE, loadConfig } from '../../../src/config.ts';
import { outOfCompute } from '../../../src/settlement/executor.ts';
import { marketBookDecider } from '../../../actors/market-book/index.ts';

const pk = () => Keypair.generate().publicKey;
const accounts = { collateralMint: pk(), delegate: pk(), feeRecipient: pk() };

/** token instructions as [kind, amount] */
function moves(ixs: TransactionInstruction[]) {
  return ixs
    .filter((ix) => ix.programId.equals(TOKEN_PROGRAM_ID))
    .map((ix) => {
      const d: any = decodeInstruction(ix);
      return [d.type ?? d.data.instruction, BigInt(d.data.amount)] as [number, bigint];
    });
}

test('legs at several prices sum exactly to the notional; a SELL taker pays its fee out of its proceeds', (t) => {
  const yes = pk().toBase58();
  const legs = [333_333n, 333_333n, 333_334n].map((q, i) => ({
    order_id: `m${i}`,
    owner: pk().toBase58(),
    matched_amount: String(q),
    price: 410_000 + i * 10_000,
    asset_id: yes,
    side: 'BUY' as const,
  }));
  const notional = (333_333n * 410_000n + 333_333n * 420_000n + 333_334n * 430_000n) / 1_000_000n;
  const trade: SettlementTrade = {
    id: 't',
    taker_order_id: 'tk',
    asset_id: yes,
    side: 'SELL',
    owner: pk().toBase58(),
    notional: notional.toString(),
    fee: '4200',
    match_type: 'COMPLEMENTARY',
    maker_orders: legs,
  };
  const plan = planSettlement(trade, accounts);
  const m = moves(plan.instructions);
  // per leg: tokens to the maker, then its collateral to the taker; the fee (4200) from the first
  // maker's payment. Taker parts by cumulative floor: 136666, 140000, 143334 = 420000 = notional.
  t.is(notional, 420_000n);
  t.deepEqual(
    m.map((x) => x[1]),
    [333_333n, 136_666n - 4200n, 4200n, 333_333n, 140_000n, 333_334n, 143_334n],
  );
  t.deepEqual(plan.blame.slice(0, 3), ['tk', 'm0', 'm0']);
  t.throws(() => planSettlement({ ...trade, notional: String(notional + 1n) }, accounts), { message: /notional/ });
});

test('the signed transaction carries its compute-unit limit and price', (t) => {
  const payer = Keypair.generate();
  const s = signWithBudget(payer, [], {
    blockhash: new PublicKey(new Uint8Array(32).fill(7)).toBase58(),
    cuLimit: 42_000,
    cuPrice: 2_000n,
  });
  t.deepEqual(budgetOf(s.tx), { cuLimit: 42_000, cuPrice: 2_000n });
  t.true(
    outOfCompute({ InstructionError: [3, 'ProgramFailedToComplete'] } as any, [
      'Program Tokenkeg… failed: exceeded CUs meter at BPF instruction',
    ]),
  );
  t.false(outOfCompute({ InstructionError: [3, { Custom: 4 }] } as any, ['Program log: Error: owner does not match']));
});

test('UpdateTrade: the book records settlement news on its ledger and changes nothing else', (t) => {
  const s = marketBookDecider.initial('0xabc');
  const d = marketBookDecider.decide(s, {
    type: 'UpdateTrade',
    tradeId: 't-1',
    status: 'FAILED',
    now: 5,
    transactionHash: 'sig',
    attempt: 2,
    reason: 'no allowance',
  });
  t.deepEqual(d.events, [
    { type: 'TradeUpdated', at: 5, tradeId: 't-1', status: 'FAILED', transactionHash: 'sig', attempt: 2, reason: 'no allowance' },
  ]);
  t.deepEqual(d.reply, { ok: true, trade_id: 't-1', status: 'FAILED' });
  const before = JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? String(v) : v instanceof Map ? [...v] : v));
  marketBookDecider.evolve(s, d.events[0]);
  t.is(
    JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? String(v) : v instanceof Map ? [...v] : v)),
    before,
  );
  t.like(marketBookDecider.decide(s, { type: 'UpdateTrade', tradeId: 't-1', status: 'BOGUS' as any, now: 5 }).reply, {
    error: 'INVALID_COMMAND',
  });
});

type Kind = ['COMPLEMENTARY' | 'MINT' | 'MERGE', 'BUY' | 'SELL'];
const BLOCKHASH = new PublicKey(new Uint8Array(32).fill(9)).toBase58();

/**
 * The signed settlement of a trade with `n` makers, each a distinct wallet, at the taker's
 * effective price `eff`, the taker fee at `rateBps`: its serialized size (Infinity when it cannot
 * be serialized), and the token accounts it credits (to create beforehand). `create`: for
 * reference only, the size it would have with the creations of all those accounts inside it (as
 * the settlement transaction had before the executor's preparatory step).
 */
function settlement(n: number, match: Kind[0], side: Kind[1], eff: number, rateBps: number, o: { create?: boolean; feeApart: boolean }) {
  const delegate = Keypair.generate();
  const acc = { collateralMint: pk(), delegate: delegate.publicKey, feeRecipient: o.feeApart ? pk() : delegate.publicKey };
  const [yes, no] = [pk().toBase58(), pk().toBase58()];
  const q = 1_234_567n;
  const makerPrice = match === 'COMPLEMENTARY' ? eff : 1_000_000 - eff;
  const makerSide = match === 'COMPLEMENTARY' ? (side === 'BUY' ? 'SELL' : 'BUY') : side;
  const legs = Array.from({ length: n }, (_, i) => ({
    order_id: `m${i}`,
    owner: pk().toBase58(),
    matched_amount: q,
    price: makerPrice,
    asset_id: match === 'COMPLEMENTARY' ? yes : no,
    side: makerSide,
  }));
  const fee = (BigInt(rateBps) * BigInt(Math.min(eff, 1_000_000 - eff)) * q * BigInt(n)) / 10_000_000_000n;
  const trade: SettlementTrade = {
    id: 't',
    taker_order_id: 'tk',
    asset_id: yes,
    side,
    owner: pk().toBase58(),
    notional: (BigInt(eff) * q * BigInt(n)) / 1_000_000n,
    fee,
    match_type: match,
    maker_orders: legs,
  };
  const plan = planSettlement(trade, acc);
  const ixs = o.create ? [...planAccountCreations(delegate, plan.destinations).flat(), ...plan.instructions] : plan.instructions;
  let bytes = Infinity;
  try {
    bytes = signWithBudget(delegate, ixs, { blockhash: BLOCKHASH, cuLimit: estimateComputeUnits(ixs) * 8, cuPrice: 1_000_000_000n }).raw
      .length;
  } catch {
    /* too large to serialize */
  }
  return { bytes, plan, delegate };
}

const settlementBytes = (
  n: number,
  match: Kind[0],
  side: Kind[1],
  eff: number,
  rateBps: number,
  o: { create?: boolean; feeApart: boolean },
) => settlement(n, match, side, eff, rateBps, o).bytes;

/** The largest settlement of `n` makers over the kinds, prices, fee rates and fee recipients. */
const worst = (n: number, kinds: Kind[], create = false) => {
  let max = 0;
  for (const [match, side] of kinds) {
    for (const eff of [10_000, 300_000, 500_000, 700_000, 990_000])
      for (const rate of [0, 100, 10_000])
        for (const feeApart of [false, true]) {
          max = Math.max(max, settlementBytes(n, match, side, eff, rate, { create, feeApart }));
        }
  }
  return max;
};

const COMPLEMENTARY: Kind[] = [
  ['COMPLEMENTARY', 'BUY'],
  ['COMPLEMENTARY', 'SELL'],
];
const MINT_MERGE: Kind[] = [
  ['MINT', 'BUY'],
  ['MERGE', 'SELL'],
];

test('maker caps: the worst trade of each type at its default cap fits in one transaction, one maker more does not', (t) => {
  const cfg = loadConfig({});
  const cap = DEFAULT_MAX_MAKERS_PER_TRADE;
  const capMM = DEFAULT_MAX_MAKERS_PER_MINT_MERGE_TRADE;
  t.is(cfg.maxMakersPerTrade, cap);
  t.is(cfg.maxMakersPerMintMergeTrade, capMM);
  // every maker a distinct wallet, no token account created in the transaction (the executor
  // creates missing ones beforehand), the fee recipient apart from the delegate or not, any price
  // and fee rate (src/settlement/README.md)
  const c = [worst(cap, COMPLEMENTARY), worst(cap + 1, COMPLEMENTARY)];
  const mm = [worst(capMM, MINT_MERGE), worst(capMM + 1, MINT_MERGE)];
  t.log(
    `COMPLEMENTARY: ${cap} makers ${c[0]} bytes, ${cap + 1}: ${c[1]}; MINT/MERGE: ${capMM} makers ${mm[0]} bytes, ${capMM + 1}: ${mm[1]}`,
  );
  t.true(c[0] <= 1232, `${c[0]} bytes`);
  t.true(c[1] > 1232, 'CLOB_MAX_MAKERS_PER_TRADE: the default is the largest that is always safe');
  t.true(mm[0] <= 1232, `${mm[0]} bytes`);
  t.true(mm[1] > 1232, 'CLOB_MAX_MAKERS_PER_MINT_MERGE_TRADE: the default is the largest that is always safe');
  t.true(Math.min(cap, capMM) >= 4, 'SPEC 2.7: a taker sweeping four price levels yields one trade with four maker legs');
  // the worst MINT/MERGE case is the fee recipient apart from the delegate
  t.is(
    worst(capMM, MINT_MERGE),
    Math.max(
      settlementBytes(capMM, 'MINT', 'BUY', 500_000, 100, { feeApart: true }),
      settlementBytes(capMM, 'MERGE', 'SELL', 500_000, 100, { feeApart: true }),
    ),
  );
  // for reference, with every receiving account created inside the settlement (as before the
  // preparatory step): 3 makers of any type fitted, 4 MINT/MERGE did not, COMPLEMENTARY fitted 5
  t.true(worst(3, [...COMPLEMENTARY, ...MINT_MERGE], true) <= 1232);
  t.true(worst(4, MINT_MERGE, true) > 1232);
  t.true(worst(5, COMPLEMENTARY, true) <= 1232);
  t.true(settlementBytes(9, 'COMPLEMENTARY', 'BUY', 500_000, 100, { feeApart: false }) <= 1232);
});

test('the settlement transaction creates no account; the preparatory transactions create each it credits, each fitting in one transaction', (t) => {
  for (const [match, side, n] of [
    ['COMPLEMENTARY', 'SELL', DEFAULT_MAX_MAKERS_PER_TRADE],
    ['MINT', 'BUY', DEFAULT_MAX_MAKERS_PER_MINT_MERGE_TRADE],
    ['MERGE', 'SELL', DEFAULT_MAX_MAKERS_PER_MINT_MERGE_TRADE],
  ] as const) {
    const { plan, delegate } = settlement(n, match, side, 300_000, 100, { feeApart: true });
    t.false(
      plan.instructions.some((ix) => ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)),
      `${match}: no creation in the settlement`,
    );
    const txs = planAccountCreations(delegate, plan.destinations);
    const created = txs.flat().map((ix) => ix.keys[1].pubkey.toBase58());
    t.deepEqual(
      created,
      plan.destinations.map((d) => d.account.toBase58()),
      'each account once, in order',
    );
    for (const ixs of txs) {
      t.true(
        ixs.every((ix) => ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID) && ix.data.length === 1 && ix.data[0] === 1),
        'CreateIdempotent only',
      );
      const bytes = signWithBudget(delegate, ixs, {
        blockhash: BLOCKHASH,
        cuLimit: estimateComputeUnits(ixs) * 64,
        cuPrice: 1_000_000_000n,
      }).raw.length;
      t.true(bytes <= MAX_TRANSACTION_BYTES, `${ixs.length} creations: ${bytes} bytes`);
    }
    t.log(
      `${match} ${n} makers: ${plan.destinations.length} accounts credited, ${txs.map((x) => x.length).join(' + ')} creations per preparatory transaction`,
    );
  }
  t.deepEqual(planAccountCreations(Keypair.generate(), []), []);
  // many missing accounts: split into several transactions, each fitting
  const payer = Keypair.generate();
  const many = Array.from({ length: 40 }, () => {
    const owner = pk();
    const mint = pk();
    return { account: pk(), owner, mint };
  });
  const split = planAccountCreations(payer, many);
  t.true(split.length > 1, `${split.map((x) => x.length).join(' + ')}`);
  t.is(split.flat().length, 40);
  for (const ixs of split)
    t.true(signWithBudget(payer, ixs, { blockhash: BLOCKHASH, cuLimit: 1_400_000, cuPrice: 1n }).raw.length <= MAX_TRANSACTION_BYTES);
});

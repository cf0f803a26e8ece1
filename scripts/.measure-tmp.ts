import { Keypair, PublicKey } from '@solana/web3.js';
import { planSettlement, signWithBudget, estimateComputeUnits, type SettlementTrade } from '../src/chain/settlement-tx.ts';
const pk = () => Keypair.generate().publicKey;
const delegate = Keypair.generate();
const C = pk(), yes = pk(), no = pk();
const bh = new PublicKey(new Uint8Array(32).fill(7)).toBase58();
function size(n: number, mt: 'COMPLEMENTARY'|'MINT'|'MERGE', side: 'BUY'|'SELL', eff: number, rate: number, feeSep: boolean, exist: boolean, sameOwner: boolean) {
  const accounts = { collateralMint: C, delegate: delegate.publicKey, feeRecipient: feeSep ? pk() : delegate.publicKey };
  const taker = pk().toBase58();
  const takerAsset = yes.toBase58();
  const makerAsset = mt === 'COMPLEMENTARY' ? yes.toBase58() : no.toBase58();
  const mp = mt === 'COMPLEMENTARY' ? eff : 1_000_000 - eff;
  const q = 1_234_567n;
  const owner0 = pk().toBase58();
  const legs = Array.from({ length: n }, (_, i) => ({ order_id: `m${i}`, owner: sameOwner ? owner0 : pk().toBase58(), matched_amount: q, price: mp, asset_id: makerAsset, side: (mt === 'COMPLEMENTARY' ? (side === 'BUY' ? 'SELL' : 'BUY') : side) as any }));
  const notional = (BigInt(eff) * q * BigInt(n)) / 1_000_000n;
  const m = Math.min(eff, 1_000_000 - eff);
  const fee = (BigInt(rate) * BigInt(m) * q * BigInt(n)) / 10_000_000_000n;
  const t: SettlementTrade = { id: 't', taker_order_id: 'tk', asset_id: takerAsset, side, owner: taker, notional, fee, match_type: mt, maker_orders: legs };
  const plan = planSettlement(t, accounts, () => exist);
  const s = signWithBudget(delegate, plan.instructions, { blockhash: bh, cuLimit: estimateComputeUnits(plan.instructions) * 2, cuPrice: 1_000_000n });
  return s.raw.length;
}
const combos: Array<['COMPLEMENTARY'|'MINT'|'MERGE', 'BUY'|'SELL']> = [['COMPLEMENTARY','BUY'],['COMPLEMENTARY','SELL'],['MINT','BUY'],['MERGE','SELL']];
for (const exist of [false, true]) {
  console.log(exist ? '--- every account exists' : '--- every receiving account created');
  for (const [mt, side] of combos) {
    const row: string[] = [];
    for (let n = 1; n <= 14; n++) {
      let max = 0;
      for (const eff of [10_000, 300_000, 500_000, 700_000, 990_000]) for (const rate of [0, 100, 10_000]) for (const feeSep of [false, true]) {
        try { max = Math.max(max, size(n, mt, side, eff, rate, feeSep, exist, false)); } catch (e) { max = Infinity; }
      }
      row.push(`${n}:${max}`);
    }
    console.log(mt, side, row.join(' '));
  }
}
console.log('--- worst over everything, fee recipient = delegate / distinct, all created');
for (let n = 1; n <= 6; n++) {
  const r: number[] = [];
  for (const feeSep of [false, true]) { let max = 0; for (const [mt, side] of combos) for (const eff of [10_000, 300_000, 500_000, 700_000, 990_000]) for (const rate of [0, 100, 10_000]) { try { max = Math.max(max, size(n, mt, side, eff, rate, feeSep, false, false)); } catch { max = Infinity; } } r.push(max); }
  console.log(n, r.join(' / '));
}

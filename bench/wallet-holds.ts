// Benchmark (not a test): what the Wallet decider costs per order (a PlaceOrder, then its cancel's
// ReleaseOrders) as the wallet's resting holds grow, as a market maker's do. A wallet's decide and
// evolve keep running sums of its holds (actors/wallet/decider.ts), so the cost should not grow
// with the holds. Usage: npx tsx bench/wallet-holds.ts [orders=2000]
import { walletDecider, type WalletState } from '../actors/wallet/decider.ts';

const [orders = 2_000] = process.argv.slice(2).map(Number);

function perOrder(holds: number): number {
  let s: WalletState = walletDecider.initial('W');
  const apply = (cmd: any) => {
    const d = walletDecider.decide(s, cmd);
    for (const e of d.events) s = walletDecider.evolve(s, e);
    return d;
  };
  apply({ type: 'SeeBalance', asset: 'collateral', balance: { amount: String(10n ** 15n), slot: 1 }, at: 1 });
  const place = (i: number) =>
    apply({
      type: 'PlaceOrder',
      orderId: `o${i}`,
      asset: 'collateral',
      amount: '10',
      market: 'm',
      book: { topic: 'b', key: 'm', id: `p${i}`, cmd: {} },
      at: 2,
    });
  for (let i = 0; i < holds; i++) place(i);
  const t0 = performance.now();
  for (let i = 0; i < orders; i++) {
    place(holds + i);
    apply({ type: 'ReleaseOrders', orderIds: [`o${holds + i}`], reason: 'cancel', at: 3 });
  }
  return ((performance.now() - t0) / orders) * 1000;
}

perOrder(50); // warm-up
console.table(
  [5, 50, 500, 5_000, 20_000].map((holds) => ({ 'holds on the wallet': holds, 'µs per order + cancel': perOrder(holds).toFixed(1) })),
);

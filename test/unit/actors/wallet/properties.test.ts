// Properties of the Wallet decider over random command sequences: what is free always equals the
// balance minus the holds recomputed from the reservations (the decider keeps running sums instead);
// decide never writes the state; and a state restored from its snapshot decides exactly the same.
import test from 'ava';
import fc from 'fast-check';
import { available, walletDecider, type WalletState } from '../../../../actors/wallet/decider.ts';

const ASSETS = ['collateral', 'tokA', 'tokB'];

/** The holds as the reservations say, summed the slow way. */
function heldByHand(s: WalletState, asset: string, now: number): bigint {
  let sum = 0n;
  for (const r of Object.values(s.reservations)) if (r.asset === asset && (r.confirmed || r.lapsesAt > now)) sum += BigInt(r.amount);
  return sum;
}

const restored = (s: WalletState): WalletState => JSON.parse(JSON.stringify(s));

const command = fc.oneof(
  fc.record({
    type: fc.constantFrom('PlaceOrder', 'Reserve'),
    order: fc.integer({ min: 0, max: 12 }),
    asset: fc.constantFrom(...ASSETS),
    amount: fc.integer({ min: 1, max: 60 }),
    balance: fc.option(fc.record({ amount: fc.integer({ min: 0, max: 300 }), slot: fc.integer({ min: 0, max: 50 }) }), { nil: undefined }),
    holdMs: fc.integer({ min: 1, max: 5_000 }),
  }),
  fc.record({ type: fc.constant('Confirm'), order: fc.integer({ min: 0, max: 12 }) }),
  fc.record({
    type: fc.constant('Release'),
    order: fc.integer({ min: 0, max: 12 }),
    amount: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
  }),
  fc.record({ type: fc.constant('ReleaseOrders'), orders: fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 4 }) }),
  fc.record({
    type: fc.constant('SeeBalance'),
    asset: fc.constantFrom(...ASSETS),
    amount: fc.integer({ min: 0, max: 300 }),
    slot: fc.integer({ min: 0, max: 50 }),
  }),
);

function toCmd(c: any, at: number): any {
  const id = (n: number) => `o${n}`;
  switch (c.type) {
    case 'PlaceOrder':
    case 'Reserve':
      return {
        type: c.type,
        orderId: id(c.order),
        asset: c.asset,
        amount: String(c.amount),
        market: 'm',
        ...(c.balance ? { balance: { amount: String(c.balance.amount), slot: c.balance.slot } } : {}),
        ...(c.type === 'Reserve'
          ? { holdMs: c.holdMs }
          : { book: { topic: 'b', key: 'm', id: `place:${c.order}`, cmd: { type: 'PlaceOrder' } } }),
        at,
      };
    case 'Confirm':
      return { type: 'Confirm', orderId: id(c.order), at };
    case 'Release':
      return { type: 'Release', orderId: id(c.order), reason: 'fill', ...(c.amount ? { amount: String(c.amount) } : {}), at };
    case 'ReleaseOrders':
      return { type: 'ReleaseOrders', orderIds: c.orders.map(id), reason: 'cancel', at };
    case 'SeeBalance':
      return { type: 'SeeBalance', asset: c.asset, balance: { amount: String(c.amount), slot: c.slot }, at };
  }
}

test('free = balance − holds recomputed by hand; decide never writes; a restored snapshot decides the same', (t) => {
  fc.assert(
    fc.property(fc.array(fc.tuple(command, fc.integer({ min: 0, max: 2_000 })), { maxLength: 80 }), (steps) => {
      let s = walletDecider.initial('W');
      let at = 1_000;
      for (const [c, dt] of steps) {
        at += dt;
        const cmd = toCmd(c, at);
        const before = JSON.stringify(s);
        const copy = restored(s);
        const d = walletDecider.decide(s, cmd);
        if (JSON.stringify(s) !== before) return false; // decide wrote the state
        if (JSON.stringify(walletDecider.decide(copy, cmd)) !== JSON.stringify(d)) return false; // the snapshot decides otherwise
        for (const e of d.events) s = walletDecider.evolve(s, e);
        for (const asset of ASSETS) {
          const byHand = BigInt(s.balances[asset]?.amount ?? '0') - heldByHand(s, asset, at);
          if (available(s, asset, at) !== byHand) return false;
        }
      }
      return true;
    }),
    { numRuns: 300 },
  );
  t.pass();
});

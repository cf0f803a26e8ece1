// Fixed-point pricing of the emulated parlay program (no chain needed).
import test from 'ava';
import fc from 'fast-check';
import { combinedProbability, payoutFor, wonPayout } from '../../../src/chain/local/parlay/math.ts';

test('fixture 03: 10 units on 0.5 and 0.4 with a 200 bps edge pay 49 units', (t) => {
  const combined = combinedProbability([500_000, 400_000]);
  t.is(combined, 200_000_000_000n);
  t.is(payoutFor(10_000_000n, combined, 200), 49_000_000n);
  // fixture 08: 5 units on 0.6 and 0.6
  t.is(payoutFor(5_000_000n, combinedProbability([600_000, 600_000]), 200), 13_611_111n);
});

test('payout grows as the combined probability falls, and voiding legs never raises it', (t) => {
  const prob = fc.integer({ min: 1_000, max: 999_999 });
  fc.assert(
    fc.property(
      fc.array(prob, { minLength: 2, maxLength: 8 }),
      fc.bigInt({ min: 1_000_000n, max: 1_000_000_000n }),
      fc.integer({ min: 0, max: 9_999 }),
      fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
      (ps, stake, edge, voided) => {
        const combined = combinedProbability(ps);
        const potential = payoutFor(stake, combined, edge);
        if (potential === null) return true;
        const status = ps.map((_, i) => (voided[i] ? 3 : 1));
        const won = wonPayout(stake, potential, ps, status, edge);
        return won <= potential && won >= 0n && potential >= (stake * BigInt(10_000 - edge)) / 10_000n;
      },
    ),
  );
  t.pass();
});

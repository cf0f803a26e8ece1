// topics/units.ts: the one conversion between decimal strings of units and integer micro-units.
import test from 'ava';
import fc from 'fast-check';
import { decimalToMicro, microToDecimal, MICRO } from '../../../topics/units.ts';

test('micro-units to decimals: shortest form, exact, signed', (t) => {
  t.is(microToDecimal(550_000n), '0.55');
  t.is(microToDecimal(0), '0');
  t.is(microToDecimal('12500000'), '12.5');
  t.is(microToDecimal(1n), '0.000001');
  t.is(microToDecimal(-1_500_000n), '-1.5');
  t.is(microToDecimal(2n ** 63n - 1n), '9223372036854.775807');
});

test('decimals to micro-units: bounded, exact, null when not one', (t) => {
  t.is(decimalToMicro('0.29'), 290_000n);
  t.is(decimalToMicro('100'), 100n * MICRO);
  t.is(decimalToMicro('0.0000001'), null, 'at most 6 places');
  t.is(decimalToMicro('-1'), null, 'no sign unless asked');
  t.is(decimalToMicro('-1.25', { negative: true }), -1_250_000n);
  t.is(decimalToMicro('1234567890123', { maxWholeDigits: 12 }), null);
  for (const bad of ['', '.5', '1.', '1e3', ' 1', '0x10', '1,5', '١']) t.is(decimalToMicro(bad), null, bad);
  t.is(decimalToMicro('9'.repeat(100_000)), null, 'a long input is refused by its length, at once');
});

test('round trip: every micro amount survives both ways', (t) => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: -(10n ** 24n - 1n), max: 10n ** 24n - 1n }),
      (n) => decimalToMicro(microToDecimal(n), { negative: true }) === n,
    ),
  );
  t.pass();
});

// Parlay templates, the pure parts: leg probability rules, the program's arithmetic, body schemas, ETags.
import test from 'ava';
import { combinedProbability, fixed, legProbability, outcomeBidAsk, payoutFor } from '../../../src/templates/pricing.ts';
import * as programMath from '../../../src/chain/local/parlay/math.ts';
import { quoteRequest, templateCreate, templatePatch } from '../../../src/templates/schemas.ts';
import { assertSubmittable } from '../../../src/templates/service.ts';
import { etagMatches } from '../../../src/http/routes/templates.ts';
import { DomainError } from '../../../src/errors.ts';

const m = { yes_token_id: 'YES', no_token_id: 'NO', reference_price: 550_000 };
const q = (
  yes: [number | null, number | null],
  no: [number | null, number | null] = [null, null],
  last: { asset_id: string; price: number } | null = null,
) => ({
  yes: { bid: yes[0] === null ? null : { price: yes[0] }, ask: yes[1] === null ? null : { price: yes[1] } },
  no: { bid: no[0] === null ? null : { price: no[0] }, ask: no[1] === null ? null : { price: no[1] } },
  last,
});

test('leg probability: midpoint of best bid and ask of the selected outcome', (t) => {
  t.deepEqual(legProbability(q([400_000, 600_000]), m, 'YES', false), { probability: 500_000, source: 'midpoint' });
  t.deepEqual(legProbability(q([410_000, 440_000]), m, 'YES', false), { probability: 425_000, source: 'midpoint' });
  t.deepEqual(
    legProbability(q([400_001, 400_002]), m, 'YES', false),
    { probability: 400_002, source: 'midpoint' },
    'half a micro rounds up',
  );
  t.deepEqual(legProbability(q([null, null], [300_000, 350_000]), m, 'NO', false), { probability: 325_000, source: 'midpoint' });
});

test('leg probability: with mint/merge the other outcome book counts at 1 − its price', (t) => {
  // Only NO orders: a NO bid at 0.30 is a YES ask at 0.70, a NO ask at 0.40 a YES bid at 0.60.
  t.deepEqual(outcomeBidAsk(q([null, null], [300_000, 400_000]), 'YES', true), { bid: 600_000, ask: 700_000 });
  t.deepEqual(legProbability(q([null, null], [300_000, 400_000]), m, 'YES', true), { probability: 650_000, source: 'midpoint' });
  t.deepEqual(outcomeBidAsk(q([null, null], [300_000, 400_000]), 'YES', false), { bid: null, ask: null });
  // Own book better than the complement: the best of both.
  t.deepEqual(outcomeBidAsk(q([620_000, 680_000], [300_000, 400_000]), 'YES', true), { bid: 620_000, ask: 680_000 });
});

test('leg probability: last trade when one-sided, seen from the selected outcome; then the reference price', (t) => {
  const lastNo = { asset_id: 'NO', price: 700_000 };
  t.deepEqual(legProbability(q([250_000, null], [null, null], lastNo), m, 'YES', true), { probability: 300_000, source: 'last_trade' });
  t.deepEqual(legProbability(q([250_000, null], [null, null], lastNo), m, 'NO', true), { probability: 700_000, source: 'last_trade' });
  t.deepEqual(legProbability(q([null, 600_000]), m, 'YES', false), { probability: 550_000, source: 'reference' });
  t.deepEqual(legProbability(q([null, 600_000]), m, 'NO', false), { probability: 450_000, source: 'reference' });
  t.deepEqual(legProbability(null, m, 'YES', true), { probability: 550_000, source: 'reference' });
  t.is(legProbability(q([null, null]), { ...m, reference_price: null }, 'YES', true), null);
});

test('combined probability and payout are the program arithmetic (fixture: 0.5 × 0.4, stake 10, edge 2% → 49)', (t) => {
  t.is(combinedProbability([500_000, 400_000]), 200_000_000_000n);
  t.is(fixed(combinedProbability([500_000, 400_000]), 12), '0.200000000000');
  t.is(payoutFor(10_000_000n, 200_000_000_000n, 200), 49_000_000n);
  t.is(payoutFor(1_000_000n, 200_000_000_000n, 200), 4_900_000n);
  t.is(payoutFor(1_000_000n, 0n, 200), null);
  for (const probs of [
    [500_000, 300_000, 200_000],
    [333_333, 777_777],
    [1, 999_999, 123_457],
    [999_999, 999_999, 999_999, 999_999],
  ]) {
    const c = combinedProbability(probs);
    t.is(c, programMath.combinedProbability(probs));
    for (const edge of [0, 200, 9_999]) t.is(payoutFor(7_654_321n, c, edge), programMath.payoutFor(7_654_321n, c, edge));
  }
  t.is(fixed(32_666_666n, 6), '32.666666');
  t.is(fixed(5n, 12), '0.000000000005');
});

const YES_LEG = { condition_id: `0x${'a'.repeat(64)}`, selected_outcome: 'YES' };
const NO_LEG = { condition_id: `0x${'b'.repeat(64)}`, selected_outcome: 'no' };
const DEMO = { demo: true, market_id: -1, question: 'Demo?', selected_outcome: 'YES', probability: '0.35' };

test('template bodies: rules and clear messages', (t) => {
  const ok = templateCreate.parse({ name: ' Combo ', legs: [YES_LEG, NO_LEG, DEMO] });
  t.is(ok.name, 'Combo');
  t.is(ok.description, '');
  t.is(ok.display_order, 0);
  t.true(ok.is_active);
  t.deepEqual(ok.legs[1], { condition_id: NO_LEG.condition_id, selected_outcome: 'NO' });
  t.deepEqual(ok.legs[2], { ...DEMO, probability: 350_000 });
  const msg = (body: unknown) => {
    const r = templateCreate.safeParse(body);
    t.false(r.success, JSON.stringify(body));
    return r.success ? '' : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  };
  t.regex(msg({ legs: [YES_LEG, NO_LEG] }), /name/);
  t.regex(msg({ name: 'x', legs: [YES_LEG] }), /at least 2 legs/);
  t.regex(msg({ name: 'x', legs: [YES_LEG, { ...YES_LEG, selected_outcome: 'NO' }] }), /same market appears twice/);
  t.regex(msg({ name: 'x', legs: [DEMO, { ...DEMO, question: 'other' }] }), /same market appears twice/);
  t.regex(msg({ name: 'x', legs: [YES_LEG, { ...NO_LEG, selected_outcome: 'MAYBE' }] }), /legs\.1/);
  t.regex(msg({ name: 'x', legs: [YES_LEG, { ...NO_LEG, condition_id: '0x12' }] }), /legs\.1/);
  t.regex(msg({ name: 'x', legs: [YES_LEG, { ...DEMO, market_id: 5 }] }), /legs\.1/);
  t.regex(msg({ name: 'x', legs: [YES_LEG, { ...DEMO, probability: '1' }] }), /legs\.1/);
  t.regex(msg({ name: 'x', legs: [YES_LEG, { ...DEMO, probability: '0' }] }), /legs\.1/);
  t.regex(msg({ name: 'x', legs: [YES_LEG, { ...DEMO, market_address: 'abc' }] }), /legs\.1/);
  t.regex(msg({ name: 'x', legs: [YES_LEG, NO_LEG], extra: 1 }), /extra/);
  t.regex(msg({ name: 'x', display_order: 1.5, legs: [YES_LEG, NO_LEG] }), /display_order/);
  t.false(templatePatch.safeParse({}).success);
  t.true(templatePatch.safeParse({ is_active: false }).success);
  t.false(quoteRequest.safeParse({ stake: 1 }).success);
  t.false(quoteRequest.safeParse({ template_id: 1, legs: [YES_LEG, NO_LEG], stake: 1 }).success);
  t.is(quoteRequest.parse({ template_id: 1, stake: '10000000' }).stake, 10_000_000n);
});

test('demo legs are never submittable', (t) => {
  const e = t.throws(() =>
    assertSubmittable([
      { demo: false, market_id: 101 },
      { demo: true, market_id: -7 },
    ]),
  );
  t.true(e instanceof DomainError);
  t.is((e as DomainError).kind, 'invalid', 'answered 400 by the front door');
  t.is((e as DomainError).code, 'demo_leg');
  t.regex(e!.message, /leg 1 is a demo leg \(market -7\)/);
  t.notThrows(() =>
    assertSubmittable([
      { demo: false, market_id: 101 },
      { demo: false, market_id: 102 },
    ]),
  );
});

test('If-None-Match: strong, weak, lists and *', (t) => {
  t.true(etagMatches('"abc"', '"abc"'));
  t.true(etagMatches('W/"abc"', '"abc"'));
  t.true(etagMatches('"x", "abc"', '"abc"'));
  t.true(etagMatches('*', '"abc"'));
  t.false(etagMatches('"abd"', '"abc"'));
  t.false(etagMatches(undefined, '"abc"'));
});

// topics/parlay-events.ts: `parlayCreatedAsIs`, the hand-written check of the topic's most frequent
// command, accepts nothing the zod schema refuses or would change, and accepts the creations the
// event decoder makes. Valid creations are generated, then damaged in every way a record from Kafka
// could be (a field of another type or out of range, a key missing or added, a leg broken).
import test from 'ava';
import fc from 'fast-check';
import { parlayCommand, parlayCommands, parlayCreatedAsIs } from '../../../topics/parlay-events.ts';
import { createdArb } from '../../helpers/parlay-arbitraries.ts';

const created = createdArb;

/** Values a damaged field may take: of every JSON type, near the bounds, and the bounds' neighbours. */
const odd = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    '',
    '-1',
    '01',
    '9223372036854775808',
    '18446744073709551615',
    '1.5',
    ' 1',
    'x'.repeat(101),
    2 ** 53,
    -1,
    1.5,
    NaN,
    Infinity,
    -0,
    1_000_001,
    2,
  ),
  fc.string({ maxLength: 120 }),
  fc.array(fc.nat(), { maxLength: 4 }),
);

/** Per field, the values at and just past its bounds (and of a near type). */
const str = (max: number) => ['', 'x'.repeat(max), 'x'.repeat(max + 1), 1];
const amounts = ['0', '9223372036854775807', '9223372036854775808', '-1', '00', '1e3', '', 7];
const ints = [-1, 1.5, 2 ** 53, -(2 ** 53), '1', NaN, null];
const edges: Record<string, unknown[]> = {
  eventId: str(100),
  signature: str(88),
  user: str(64),
  parlayId: amounts,
  stake: amounts,
  combinedProbability: amounts,
  potentialPayout: amounts,
  createdAt: ints,
  pos: [[0, 0], [0, 0, 0, 0], [-1, 0, 0], [0, 1.5, 0], [0, 0, 2 ** 53], [0, '1', 0], {}],
  legs: [[], 'x', {}],
  type: ['LegSettled', 'parlaycreated', ''],
};
const legEdges: Record<string, unknown[]> = {
  marketId: amounts,
  market: str(64),
  outcome: [-1, 2, 0.5, '0', ...ints],
  probability: [1_000_000, 1_000_001, -1, 0.5, ...ints],
};

const damaged = fc
  .tuple(
    created,
    fc.nat(),
    fc.nat(),
    fc.nat(),
    odd,
    fc.constantFrom('replace', 'edge', 'delete', 'add', 'leg-replace', 'leg-edge', 'leg-delete', 'leg-add', 'legs', 'many-legs'),
  )
  .map(([c, i, j, e, value, how]) => {
    const v: any = structuredClone(c);
    const keys = Object.keys(v);
    const k = keys[i % keys.length];
    const l = v.legs[j % v.legs.length];
    const lk = Object.keys(l)[i % 4];
    if (how === 'replace') v[k] = value;
    else if (how === 'edge') {
      const ek = Object.keys(edges)[i % Object.keys(edges).length];
      v[ek] = edges[ek][e % edges[ek].length];
    } else if (how === 'delete') delete v[k];
    else if (how === 'add') v[`extra${i % 3}`] = value;
    else if (how === 'leg-replace') l[lk] = value;
    else if (how === 'leg-edge') l[lk] = legEdges[lk][e % legEdges[lk].length];
    else if (how === 'leg-delete') delete l[lk];
    else if (how === 'leg-add') l.extra = value;
    else if (how === 'many-legs') v.legs = Array.from({ length: 64 + (e % 2) }, () => ({ ...l }));
    else v.legs = Array.isArray(value) ? value : [value];
    return v;
  });

const sorted = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sorted)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sorted((v as any)[k])]),
        )
      : v;

test('what the hand check accepts, the schema accepts unchanged; it accepts every valid creation', (t) => {
  let accepted = 0;
  let refused = 0;
  fc.assert(
    fc.property(fc.oneof(created, damaged), (v) => {
      const fast = parlayCreatedAsIs(v);
      const slow = parlayCommand.safeParse(v);
      if (fast === undefined) {
        refused++;
        return true;
      }
      accepted++;
      if (!slow.success) throw new Error(`accepted what the schema refuses: ${JSON.stringify(v)}: ${slow.error.message}`);
      t.deepEqual(sorted(slow.data), sorted(fast));
      return fast === v;
    }),
    { numRuns: 20_000 },
  );
  fc.assert(fc.property(created, (v) => parlayCreatedAsIs(v) === v));
  t.true(accepted > 500 && refused > 500, `accepted ${accepted}, refused ${refused}`);
});

test('a record from the wire goes through the hand check; what it refuses, through the schema (with its reasons)', (t) => {
  const v = {
    type: 'ParlayCreated',
    eventId: 's:0',
    pos: [1, 0, 0],
    signature: 's',
    parlayId: '7',
    user: 'u',
    stake: '10',
    combinedProbability: '1',
    potentialPayout: '2',
    legs: [{ marketId: '1', market: 'm', outcome: 0, probability: 5 }],
    createdAt: 1,
  };
  const fromWire = JSON.parse(JSON.stringify(v));
  t.is(parlayCommands.parse(fromWire), fromWire, 'taken as it is');
  const extra = { ...v, extra: 1 };
  const stripped = parlayCommands.parse(extra);
  t.not(stripped, extra, 'an extra key: parsed (and stripped) by the schema');
  t.deepEqual(sorted(stripped), sorted(v));
  t.throws(() => parlayCommands.parse({ ...v, stake: '9223372036854775808' }), { message: /stake/ });
  t.throws(() => parlayCommands.parse({ ...v, legs: [] }));
});

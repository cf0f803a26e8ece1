// topics/parlay-events.ts: a ParlayCreated packed for a bulk record on Kafka (`packParlayCommand`)
// comes back as the same command (`unpackParlayCommand`), through the record's JSON; other commands
// and creations whose eventId is not the decoder's travel unchanged; a packed form that is damaged
// is not turned into a command the parlay kind would take.
import test from 'ava';
import fc from 'fast-check';
import { bulkEnvelopeJson, bulkPartJson, commandsOf } from '../../../src/runtime/envelope.ts';
import { parlayKinds } from '../../../src/parlay/kinds.ts';
import { decodedCreatedArb } from '../../helpers/parlay-arbitraries.ts';
import { PACKED_CREATION, packParlayCommand, unpackParlayCommand, type ParlayCommand } from '../../../topics/parlay-events.ts';

const created = decodedCreatedArb;

const parlay = parlayKinds('parlay.events').find((k) => k.owns('1'))!.kind;
/** What the owner of a bulk record on Kafka makes of one command sent packed. */
const throughRecord = (c: { key: string; cmd: unknown }) => {
  const [one] = commandsOf(c.key, bulkEnvelopeJson([bulkPartJson(c.key, packParlayCommand(c.cmd))], 1));
  return parlay.parse(one.envelope.cmd, one.envelope);
};

test('a creation packed, through a bulk record, is the same command and is taken by the parlay kind', (t) => {
  fc.assert(
    fc.property(created, (c) => {
      const packed = packParlayCommand(c);
      t.true(Array.isArray(packed));
      t.is((packed as unknown[])[0], PACKED_CREATION);
      t.deepEqual(unpackParlayCommand(JSON.parse(JSON.stringify(packed))), c);
      t.deepEqual(throughRecord({ key: c.parlayId, cmd: c }), c);
    }),
    { numRuns: 300 },
  );
});

test('the packed form is about half the JSON of a three-leg creation', (t) => {
  const c = fc.sample(
    created.filter((x) => x.legs.length === 3),
    { numRuns: 1, seed: 7 },
  )[0];
  t.true(JSON.stringify(packParlayCommand(c)).length < JSON.stringify(c).length * 0.75);
});

test('other commands, and a creation whose eventId the decoder would not make, travel as they are', (t) => {
  const c = fc.sample(created, { numRuns: 1, seed: 3 })[0];
  const odd = { ...c, eventId: `${c.signature}:x` };
  t.is(packParlayCommand(odd), odd);
  const settled = {
    type: 'LegSettled',
    eventId: 's:0',
    pos: [1, 0, 0],
    signature: 's',
    parlayId: '1',
    legIndex: 0,
    marketId: '2',
    legStatus: 1,
    parlayStatus: 0,
    legsWon: 1,
    legsLost: 0,
    legsResolved: 1,
    actualPayout: '0',
    settledAt: 5,
  };
  t.is(packParlayCommand(settled), settled);
  t.deepEqual(throughRecord({ key: '1', cmd: settled }), settled as ParlayCommand);
  t.deepEqual(throughRecord({ key: c.parlayId, cmd: odd }), odd);
});

test('a damaged packed form is refused by the parlay kind, never taken as another command', (t) => {
  const c = fc.sample(created, { numRuns: 1, seed: 5 })[0];
  const packed = packParlayCommand(c) as unknown[];
  const damaged: unknown[][] = [
    packed.slice(0, 9), // a field missing
    [...packed, 1], // one too many
    ['PC0', ...packed.slice(1)], // another tag
    packed.map((v, i) => (i === 3 ? 12 : v)), // the parlay id a number
    packed.map((v, i) => (i === 2 ? [1, 2] : v)), // a position of two
    packed.map((v, i) => (i === 9 ? [] : v)), // no legs
    packed.map((v, i) => (i === 9 ? [[c.legs[0].marketId, c.legs[0].market, 2, 1]] : v)), // outcome out of range
    packed.map((v, i) => (i === 9 ? [{ ...c.legs[0] }] : v)), // a leg as an object
    packed.map((v, i) => (i === 8 ? '1' : v)), // createdAt a string
  ];
  for (const d of damaged) t.throws(() => parlay.parse(d, { v: 1, at: 1, cmd: d }), undefined, JSON.stringify(d).slice(0, 80));
});

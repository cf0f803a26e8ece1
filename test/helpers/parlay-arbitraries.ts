// fast-check arbitraries of the `parlay.events` topic's commands (topics/parlay-events.ts), shared
// by the property tests of its hand-written check and of its packed form.
import fc from 'fast-check';

/** A decimal amount or id the topic accepts (0 … BIGINT_MAX). */
export const digits = fc.bigInt(0n, 9_223_372_036_854_775_807n).map(String);

export const legArb = fc.record({
  marketId: digits,
  market: fc.string({ minLength: 1, maxLength: 64 }),
  outcome: fc.integer({ min: 0, max: 1 }),
  probability: fc.integer({ min: 0, max: 1_000_000 }),
});

/** Any ParlayCreated the topic's schema accepts unchanged. */
export const createdArb = fc.record({
  type: fc.constant('ParlayCreated' as const),
  eventId: fc.string({ minLength: 1, maxLength: 100 }),
  pos: fc.tuple(fc.nat(), fc.nat(), fc.nat()),
  signature: fc.string({ minLength: 1, maxLength: 88 }),
  parlayId: digits,
  user: fc.string({ minLength: 1, maxLength: 64 }),
  stake: digits,
  combinedProbability: digits,
  potentialPayout: digits,
  legs: fc.array(legArb, { minLength: 1, maxLength: 64 }),
  createdAt: fc.integer(),
});

/** A ParlayCreated as the event decoder makes it: its eventId is `<signature>:<pos[2]>`. */
export const decodedCreatedArb = createdArb.map((c) => ({ ...c, eventId: `${c.signature}:${c.pos[2]}` }));

// The Parlay and Vault deciders alone: pure, no I/O, milliseconds.
import test from 'ava';
import { parlayDecider, type ParlayState } from '../../../actors/parlay/decider.ts';
import { vaultDecider } from '../../../actors/vault/decider.ts';
import type { ParlayCommand } from '../../../topics/parlay-events.ts';

const created = (pos: [number, number, number] = [10, 0, 0]): ParlayCommand => ({
  type: 'ParlayCreated',
  eventId: 's1:0',
  pos,
  signature: 's1',
  parlayId: '7',
  user: 'W',
  stake: '10',
  combinedProbability: '1',
  potentialPayout: '40',
  createdAt: 1,
  legs: [
    { marketId: '1', market: 'M1', outcome: 0, probability: 500_000 },
    { marketId: '2', market: 'M2', outcome: 1, probability: 500_000 },
  ],
});
const settled = (leg: number, legStatus: number, parlayStatus: number, pos: [number, number, number]): ParlayCommand => ({
  type: 'LegSettled',
  eventId: `s${pos[0]}:0`,
  pos,
  signature: `s${pos[0]}`,
  parlayId: '7',
  legIndex: leg,
  marketId: String(leg + 1),
  legStatus,
  parlayStatus,
  legsWon: 0,
  legsLost: 0,
  legsResolved: 1,
  actualPayout: '0',
  settledAt: 2,
});

function run(cmds: ParlayCommand[]) {
  let s: ParlayState = parlayDecider.initial('7');
  const replies = [];
  for (const c of cmds) {
    const d = parlayDecider.decide(s, c);
    replies.push(d);
    for (const e of d.events) s = parlayDecider.evolve(s, e);
  }
  return { s, replies };
}

test('an event about a parlay not created yet is deferred and not remembered', (t) => {
  const { s, replies } = run([settled(0, 1, 0, [11, 0, 0])]);
  t.is(replies[0].reply.result, 'deferred');
  t.is(replies[0].final, false);
  t.deepEqual(replies[0].events, []);
  t.false(s.exists);
});

test('creation, then settlement; repeats are duplicates with no events', (t) => {
  const { s, replies } = run([created(), created(), settled(0, 2, 2, [11, 0, 0]), settled(0, 2, 2, [11, 0, 0])]);
  t.deepEqual(
    replies.map((r) => r.reply.result),
    ['applied', 'duplicate', 'applied', 'duplicate'],
  );
  t.is(s.status, 'lost');
  t.deepEqual(s.legs, ['lost', 'pending']);
});

test('a late LegSettled updates its leg but not the newer aggregates', (t) => {
  const { s, replies } = run([created(), settled(1, 1, 1, [12, 0, 0]), settled(0, 1, 0, [11, 0, 0])]);
  t.is(s.status, 'won');
  t.deepEqual(s.legs, ['won', 'won']);
  t.false((replies[2].events[0] as any).applyStatus);
  t.false((replies[2].events[0] as any).applyCounters);
});

test('a claim arriving before the last LegSettled keeps the status but lets the counters move', (t) => {
  const claim: ParlayCommand = {
    type: 'ParlayClaimed',
    eventId: 'c',
    pos: [13, 0, 0],
    signature: 'c',
    parlayId: '7',
    user: 'W',
    amount: '40',
    claimedAt: 3,
  };
  const { s, replies } = run([created(), settled(0, 1, 0, [11, 0, 0]), claim, settled(1, 1, 1, [12, 0, 0])]);
  t.is(s.status, 'claimed');
  t.deepEqual(s.legs, ['won', 'won']);
  const last = replies[3].events[0] as any;
  t.true(last.applyCounters);
  t.false(last.applyStatus);
  t.false(last.applyPayout);
});

test('a parlay with the same market twice is rejected', (t) => {
  const c = created() as any;
  c.legs[1].marketId = '1';
  t.is(run([c]).replies[0].reply.result, 'rejected');
});

test('vault values only move forward by position; PATCH yields to the next chain event', (t) => {
  let s = vaultDecider.initial('vault');
  const apply = (cmd: any) => {
    const d = vaultDecider.decide(s, { ...cmd, at: 1 });
    for (const e of d.events) s = vaultDecider.evolve(s, e);
    return d.reply.result;
  };
  t.is(apply({ type: 'VaultObserved', values: { balance: { v: '100', pos: [5, 0, 0] } } }), 'applied');
  t.is(apply({ type: 'VaultObserved', values: { balance: { v: '90', pos: [4, 0, 0] } } }), 'stale');
  t.is(s.balance.v, '100');
  t.is(apply({ type: 'VaultPatch', fields: { maxLegs: 3 } }), 'applied');
  t.is(s.maxLegs.v, 3);
  const config = {
    authority: 'A',
    collateralMint: 'M',
    vault: 'V',
    maxLegs: 8,
    minStake: '1',
    maxStake: '9',
    maxPayoutCap: '99',
    exposureRatioBps: 8000,
    houseEdgeBps: 200,
    paused: false,
  };
  t.is(apply({ type: 'ConfigObserved', eventId: 'c', signature: 'c', pos: [3, 0, 0], config }), 'applied');
  t.is(s.maxLegs.v, 3, 'an older config event does not undo a later edit');
  t.is(apply({ type: 'ConfigObserved', eventId: 'c2', signature: 'c2', pos: [6, 0, 0], config }), 'applied');
  t.is(s.maxLegs.v, 8);
  t.is(apply({ type: 'VaultSynced', balance: '77', slot: 5 }), 'applied');
  t.is(s.balance.v, '77', 'a balance read at slot 5 ranks after the events of slot 5');
  t.is(apply({ type: 'VaultObserved', values: { balance: { v: '100', pos: [5, 3, 0] } } }), 'stale');
});

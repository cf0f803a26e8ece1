// The settlement executor's rules alone (issue 17): src/settlement/decider.ts as tables of
// "given these observations (and these answers to the look-ups it asks for), then these look-ups
// and these actions". No database, no chain: every case runs in well under a millisecond. The same
// rules against the local chain, PostgreSQL and Kafka are test/settlement*.test.ts.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import { MAX_COMPUTE_UNITS } from '../../../src/chain/settlement-tx.ts';
import {
  MAX_CREATION_CU_FACTOR,
  culpritsOf,
  decide,
  decideCreations,
  outOfCompute,
  type Action,
  type Need,
  type Observations,
  type SettlementView,
} from '../../../src/settlement/decider.ts';

const ORDERS = ['taker', 'maker1', 'maker2', 'maker1'];
const BLAME = [null, 'maker1', null, 'maker2', 'taker', null]; // instruction − 2 → its party's order
const row = (o: Partial<SettlementView> = {}): SettlementView => ({
  status: 'MATCHED',
  reconciled: false,
  cuLimit: 0,
  cuPrice: 1000n,
  blame: [],
  ...o,
});
const att = (attempt: number, lastValidBlockHeight = 100) => ({ attempt, signature: `sig${attempt}`, lastValidBlockHeight });
const given = (o: Partial<Observations> = {}): Observations => ({ row: row(), attempts: [], orders: ORDERS, maxAttempts: 5, ...o });
const pk = () => Keypair.generate().publicKey;
const missingAccount = { account: pk(), owner: pk(), mint: pk() };
const OOC = { InstructionError: [3, 'ProgramFailedToComplete'] };
const OOC_LOGS = ['Program Tokenkeg… consumed 200 of 200 compute units', 'Program Tokenkeg… failed: exceeded CUs meter at BPF instruction'];
const NO_ALLOWANCE = { InstructionError: [5, { Custom: 1 }] }; // instruction 5 → BLAME[3]

/** What the shell would answer to each look-up (only those named are allowed). */
type Answers = Partial<Pick<Observations, 'chain' | 'logs' | 'missing' | 'build' | 'ledgerFailed'>>;
const field: Record<Need, keyof Answers> = { chain: 'chain', logs: 'logs', accounts: 'missing', build: 'build', ledger: 'ledgerFailed' };

/** Plays a step as the shell does: asks, makes each look-up named, asks again. */
function step(obs: Observations, answers: Answers): { looked: Need[]; actions: Action[]; build?: Action } {
  const o = { ...obs };
  const looked: Need[] = [];
  let build: Action | undefined;
  for (let i = 0; i < 10; i++) {
    const actions = decide(o);
    const need = actions[0]?.type === 'observe' ? actions[0] : null;
    if (!need) return { looked, actions, build };
    if (actions.length !== 1) throw new Error('an observe action comes alone');
    looked.push(need.need);
    if (need.need === 'build') build = need;
    const k = field[need.need];
    if (!(k in answers)) throw new Error(`the decider asked for ${need.need}, which this case does not answer`);
    (o as any)[k] = answers[k];
  }
  throw new Error('the decider keeps asking');
}

const cases: { name: string; given: Observations; answers: Answers; looks: Need[]; then: Action[] }[] = [
  {
    name: 'first send: accounts there, a new attempt signed with an estimated limit and the configured fee',
    given: given(),
    answers: { missing: [], build: { ok: true } },
    looks: ['accounts', 'build'],
    then: [{ type: 'send', attempt: 1, status: 'MATCHED', cuLimit: null, cuPrice: 1000n }],
  },
  {
    name: 'first send, an account missing: prepare it, no attempt and no status',
    given: given(),
    answers: { missing: [missingAccount] },
    looks: ['accounts'],
    then: [{ type: 'prepare', missing: [missingAccount] }],
  },
  {
    name: 'landed, not finalized → MINED',
    given: given({ attempts: [att(1)] }),
    answers: { chain: { height: 50, statuses: [{ err: null, finalized: false }] } },
    looks: ['chain'],
    then: [
      { type: 'landed', attempt: 1, signature: 'sig1', finalized: false },
      { type: 'report', status: 'MINED', transactionHash: 'sig1', attempt: 1 },
    ],
  },
  {
    name: 'landed and finalized at once → MINED and CONFIRMED',
    given: given({ attempts: [att(1)] }),
    answers: { chain: { height: 50, statuses: [{ err: null, finalized: true }] } },
    looks: ['chain'],
    then: [
      { type: 'landed', attempt: 1, signature: 'sig1', finalized: true },
      { type: 'report', status: 'MINED', transactionHash: 'sig1', attempt: 1 },
      { type: 'report', status: 'CONFIRMED', transactionHash: 'sig1', attempt: 1 },
    ],
  },
  {
    name: 'MINED before, finalized now → CONFIRMED only',
    given: given({ row: row({ status: 'MINED', cuLimit: 9000 }), attempts: [att(1)] }),
    answers: { chain: { height: 50, statuses: [{ err: null, finalized: true }] } },
    looks: ['chain'],
    then: [
      { type: 'landed', attempt: 1, signature: 'sig1', finalized: true },
      { type: 'report', status: 'CONFIRMED', transactionHash: 'sig1', attempt: 1 },
    ],
  },
  {
    name: 'MINED before, not finalized yet → nothing new to report',
    given: given({ row: row({ status: 'MINED', cuLimit: 9000 }), attempts: [att(1)] }),
    answers: { chain: { height: 50, statuses: [{ err: null, finalized: false }] } },
    looks: ['chain'],
    then: [{ type: 'landed', attempt: 1, signature: 'sig1', finalized: false }],
  },
  {
    name: 'an earlier attempt landed (a node died before recording it) → that one, whatever came after',
    given: given({ row: row({ status: 'RETRYING', cuLimit: 9000 }), attempts: [att(1, 10), att(2, 200)] }),
    answers: { chain: { height: 150, statuses: [{ err: null, finalized: true }, null] } },
    looks: ['chain'],
    then: [
      { type: 'landed', attempt: 1, signature: 'sig1', finalized: true },
      { type: 'report', status: 'MINED', transactionHash: 'sig1', attempt: 1 },
      { type: 'report', status: 'CONFIRMED', transactionHash: 'sig1', attempt: 1 },
    ],
  },
  {
    name: 'compute exhausted → a new attempt with the limit and the fee doubled, RETRYING',
    given: given({ row: row({ cuLimit: 9000, cuPrice: 1000n }), attempts: [att(1)] }),
    answers: { chain: { height: 50, statuses: [{ err: OOC, finalized: false }] }, logs: OOC_LOGS, missing: [], build: { ok: true } },
    looks: ['chain', 'logs', 'accounts', 'build'],
    then: [
      { type: 'mark', attempt: 1, outcome: 'out_of_compute' },
      { type: 'report', status: 'RETRYING', transactionHash: 'sig1', attempt: 1, reason: 'out of compute units' },
      { type: 'send', attempt: 2, status: 'RETRYING', cuLimit: 18_000, cuPrice: 2000n },
    ],
  },
  {
    name: 'compute exhausted near the ceiling → the limit stops at the most a transaction may ask for',
    given: given({ row: row({ cuLimit: 1_000_000, cuPrice: 7n }), attempts: [att(1)] }),
    answers: { chain: { height: 50, statuses: [{ err: OOC, finalized: false }] }, logs: [], missing: [], build: { ok: true } },
    looks: ['chain', 'logs', 'accounts', 'build'],
    then: [
      { type: 'mark', attempt: 1, outcome: 'out_of_compute' },
      { type: 'report', status: 'RETRYING', transactionHash: 'sig1', attempt: 1, reason: 'out of compute units' },
      { type: 'send', attempt: 2, status: 'RETRYING', cuLimit: MAX_COMPUTE_UNITS, cuPrice: 14n },
    ],
  },
  {
    name: 'not landed, blockhash still valid → the same bytes again, nothing recorded',
    given: given({ row: row({ cuLimit: 9000 }), attempts: [att(1, 100)] }),
    answers: { chain: { height: 100, statuses: [null] } },
    looks: ['chain'],
    then: [{ type: 'resend', attempt: 1, signature: 'sig1' }],
  },
  {
    name: 'not landed, blockhash expired → a new attempt, same limit and fee, fresh blockhash, RETRYING',
    given: given({ row: row({ cuLimit: 9000 }), attempts: [att(1, 100)] }),
    answers: { chain: { height: 101, statuses: [null] }, missing: [], build: { ok: true } },
    looks: ['chain', 'accounts', 'build'],
    then: [
      { type: 'mark', attempt: 1, outcome: 'expired' },
      {
        type: 'report',
        status: 'RETRYING',
        transactionHash: 'sig1',
        attempt: 1,
        reason: 'blockhash expired before the transaction landed',
      },
      { type: 'send', attempt: 2, status: 'RETRYING', cuLimit: 9000, cuPrice: 1000n },
    ],
  },
  {
    name: 'expired, and an account went missing → the outcome recorded, prepare, no RETRYING yet',
    given: given({ row: row({ cuLimit: 9000 }), attempts: [att(1, 100)] }),
    answers: { chain: { height: 101, statuses: [null] }, missing: [missingAccount] },
    looks: ['chain', 'accounts'],
    then: [
      { type: 'mark', attempt: 1, outcome: 'expired' },
      { type: 'prepare', missing: [missingAccount] },
    ],
  },
  {
    name: 'max attempts reached → FAILED, every order of the trade (once each)',
    given: given({ row: row({ status: 'RETRYING', cuLimit: 9000 }), attempts: [1, 2, 3, 4, 5].map((n) => att(n, 100)) }),
    answers: { chain: { height: 101, statuses: [null, null, null, null, null] } },
    looks: ['chain'],
    then: [
      { type: 'mark', attempt: 5, outcome: 'expired' },
      {
        type: 'fail',
        reason: 'gave up after 5 attempts: blockhash expired before the transaction landed',
        orders: ['taker', 'maker1', 'maker2'],
        transactionHash: 'sig5',
        attempt: 5,
      },
    ],
  },
  {
    name: 'max attempts reached by compute exhaustion → FAILED',
    given: given({ row: row({ cuLimit: 9000 }), maxAttempts: 1, attempts: [att(1)] }),
    answers: { chain: { height: 50, statuses: [{ err: OOC, finalized: false }] }, logs: OOC_LOGS },
    looks: ['chain', 'logs'],
    then: [
      { type: 'mark', attempt: 1, outcome: 'out_of_compute' },
      {
        type: 'fail',
        reason: 'gave up after 1 attempts: out of compute units',
        orders: ['taker', 'maker1', 'maker2'],
        transactionHash: 'sig1',
        attempt: 1,
      },
    ],
  },
  {
    name: "a wallet's instruction failed (no allowance) → FAILED, only its order invalidated",
    given: given({ row: row({ cuLimit: 9000, blame: BLAME }), attempts: [att(1)] }),
    answers: {
      chain: { height: 50, statuses: [{ err: NO_ALLOWANCE, finalized: false }] },
      logs: ['Program log: Error: owner does not match'],
    },
    looks: ['chain', 'logs'],
    then: [
      { type: 'mark', attempt: 1, outcome: 'failed' },
      {
        type: 'fail',
        reason: `settlement transaction failed: ${JSON.stringify(NO_ALLOWANCE)}`,
        orders: ['maker2'],
        transactionHash: 'sig1',
        attempt: 1,
      },
    ],
  },
  {
    name: 'failed on an instruction nobody is blamed for → FAILED, every order',
    given: given({ row: row({ cuLimit: 9000, blame: BLAME }), attempts: [att(1)] }),
    answers: { chain: { height: 50, statuses: [{ err: { InstructionError: [4, { Custom: 1 }] }, finalized: false }] }, logs: [] },
    looks: ['chain', 'logs'],
    then: [
      { type: 'mark', attempt: 1, outcome: 'failed' },
      {
        type: 'fail',
        reason: 'settlement transaction failed: {"InstructionError":[4,{"Custom":1}]}',
        orders: ['taker', 'maker1', 'maker2'],
        transactionHash: 'sig1',
        attempt: 1,
      },
    ],
  },
  {
    name: 'failed without an instruction (the fee payer could not pay) → FAILED, every order',
    given: given({ row: row({ cuLimit: 9000, blame: BLAME }), attempts: [att(1)] }),
    answers: { chain: { height: 50, statuses: [{ err: 'InsufficientFundsForFee', finalized: false }] }, logs: [] },
    looks: ['chain', 'logs'],
    then: [
      { type: 'mark', attempt: 1, outcome: 'failed' },
      {
        type: 'fail',
        reason: 'settlement transaction failed: "InsufficientFundsForFee"',
        orders: ['taker', 'maker1', 'maker2'],
        transactionHash: 'sig1',
        attempt: 1,
      },
    ],
  },
  {
    name: 'the transaction cannot be built (too big) → FAILED, every order',
    given: given(),
    answers: { missing: [], build: { ok: false, error: 'encoding overruns Uint8Array' } },
    looks: ['accounts', 'build'],
    then: [
      {
        type: 'fail',
        reason: 'settlement transaction cannot be built: encoding overruns Uint8Array',
        orders: ['taker', 'maker1', 'maker2'],
        transactionHash: '',
        attempt: 0,
      },
    ],
  },
  {
    name: 'a retry that cannot be built → RETRYING, then FAILED',
    given: given({ row: row({ cuLimit: 9000 }), attempts: [att(1, 100)] }),
    answers: { chain: { height: 101, statuses: [null] }, missing: [], build: { ok: false, error: 'too big' } },
    looks: ['chain', 'accounts', 'build'],
    then: [
      { type: 'mark', attempt: 1, outcome: 'expired' },
      {
        type: 'report',
        status: 'RETRYING',
        transactionHash: 'sig1',
        attempt: 1,
        reason: 'blockhash expired before the transaction landed',
      },
      {
        type: 'fail',
        reason: 'settlement transaction cannot be built: too big',
        orders: ['taker', 'maker1', 'maker2'],
        transactionHash: '',
        attempt: 1,
      },
    ],
  },
  {
    name: 'already CONFIRMED → nothing, no look-up',
    given: given({ row: row({ status: 'CONFIRMED', reconciled: true }), attempts: [att(1)] }),
    answers: {},
    looks: [],
    then: [],
  },
  {
    name: 'FAILED and its orders invalidated → nothing, no look-up',
    given: given({ row: row({ status: 'FAILED', reconciled: true, blame: ['maker2'] }) }),
    answers: {},
    looks: [],
    then: [],
  },
  {
    name: 'FAILED, the ledger not there yet → wait',
    given: given({ row: row({ status: 'FAILED', blame: ['maker2'] }) }),
    answers: { ledgerFailed: false },
    looks: ['ledger'],
    then: [{ type: 'wait' }],
  },
  {
    name: 'FAILED on the ledger → invalidate the orders it blamed',
    given: given({ row: row({ status: 'FAILED', blame: ['maker2', null, 'taker'] as any }) }),
    answers: { ledgerFailed: true },
    looks: ['ledger'],
    then: [{ type: 'invalidate', orders: ['maker2', 'taker'] }],
  },
];

for (const c of cases) {
  test(`decide: ${c.name}`, (t) => {
    const r = step(c.given, c.answers);
    t.deepEqual(r.looked, c.looks, 'the look-ups, in order');
    t.deepEqual(r.actions, c.then);
  });
}

test('decide: the block height and statuses are looked up first, and only when there are attempts', (t) => {
  t.deepEqual(decide(given({ attempts: [att(1)] })), [{ type: 'observe', need: 'chain' }]);
  t.deepEqual(decide(given()), [{ type: 'observe', need: 'accounts' }]);
});

test('decide: the build look-up carries the limit and fee to sign with', (t) => {
  const r = step(given({ row: row({ cuLimit: 9000, cuPrice: 1000n }), attempts: [att(1)] }), {
    chain: { height: 50, statuses: [{ err: OOC, finalized: false }] },
    logs: OOC_LOGS,
    missing: [],
    build: { ok: true },
  });
  t.deepEqual(r.build, { type: 'observe', need: 'build', cuLimit: 18_000, cuPrice: 2000n });
});

// Exactly once: whatever the chain says of the attempts, a new attempt is only made when none
// landed and the latest can no longer land (failed on chain, or its blockhash expired before
// the height was read); and a landed one is never followed by anything but recording it.
test('decide: never a new attempt while one landed or the latest can still land', (t) => {
  const kinds = ['landed', 'in flight', 'expired', 'out of compute', 'failed'] as const;
  const status = (k: (typeof kinds)[number]) =>
    k === 'landed'
      ? { err: null, finalized: false }
      : k === 'out of compute'
        ? { err: OOC, finalized: false }
        : k === 'failed'
          ? { err: NO_ALLOWANCE, finalized: false }
          : null;
  let checked = 0;
  for (const early of kinds)
    for (const late of kinds) {
      // attempt 1 expired at 100, attempt 2 valid until 200 unless it is the expired kind
      const attempts = [att(1, 100), att(2, late === 'expired' ? 100 : 200)];
      const statuses = [early === 'in flight' || early === 'expired' ? null : status(early), status(late)];
      const r = step(given({ row: row({ cuLimit: 9000, blame: BLAME }), attempts, maxAttempts: 9 }), {
        chain: { height: 150, statuses },
        logs: late === 'out of compute' ? OOC_LOGS : [],
        missing: [],
        build: { ok: true },
      });
      const sends = r.actions.filter((a) => a.type === 'send');
      const anyLanded = early === 'landed' || late === 'landed';
      if (anyLanded) t.is(r.actions[0].type, 'landed', `${early}/${late}`);
      if (anyLanded || late === 'in flight' || late === 'failed') t.is(sends.length, 0, `${early}/${late}: no new attempt`);
      else
        t.deepEqual(
          sends.map((a) => (a as any).attempt),
          [3],
          `${early}/${late}: one new attempt`,
        );
      checked++;
    }
  t.is(checked, 25);
});

test('outOfCompute reads the error and the logs as the SVM reports them', (t) => {
  t.true(outOfCompute(OOC, OOC_LOGS));
  t.true(outOfCompute(OOC, []), 'no logs: the error alone says so');
  t.true(outOfCompute({ InstructionError: [2, 'ComputationalBudgetExceeded'] }));
  t.false(outOfCompute(NO_ALLOWANCE, ['Program log: Error: owner does not match']));
  t.false(outOfCompute(OOC, ['Program log: Error: insufficient funds']), 'failed to complete for another reason');
  t.true(outOfCompute('InsufficientFundsForFee', ['Computational budget exceeded']));
});

test("culpritsOf: the failing instruction's party, else every order once", (t) => {
  t.deepEqual(culpritsOf(NO_ALLOWANCE, BLAME, ORDERS), ['maker2']);
  t.deepEqual(culpritsOf({ InstructionError: [3, { Custom: 1 }] }, BLAME, ORDERS), ['maker1']);
  t.deepEqual(culpritsOf({ InstructionError: [0, { Custom: 1 }] }, BLAME, ORDERS), ['taker', 'maker1', 'maker2'], 'a budget instruction');
  t.deepEqual(culpritsOf({ InstructionError: [40, { Custom: 1 }] }, BLAME, ORDERS), ['taker', 'maker1', 'maker2'], 'past the blame list');
  t.deepEqual(culpritsOf('AccountInUse', BLAME, ORDERS), ['taker', 'maker1', 'maker2']);
});

const creationCases: {
  name: string;
  sent?: Parameters<typeof decideCreations>[0];
  chain?: Parameters<typeof decideCreations>[1];
  then: ReturnType<typeof decideCreations>;
}[] = [
  {
    name: 'none sent from here (or a restart forgot them) → create, normal limit, no look-up',
    then: { type: 'create', cuFactor: 1, afterFailure: null },
  },
  { name: 'sent, not looked at yet → look', sent: { cuFactor: 1, lastValidBlockHeight: 100, count: 2 }, then: { type: 'observe' } },
  {
    name: 'sent, still valid, one seen → the other sent again, nothing new',
    sent: { cuFactor: 1, lastValidBlockHeight: 100, count: 2 },
    chain: { height: 100, statuses: [{ err: null, finalized: false }, null] },
    then: { type: 'resend', indexes: [1] },
  },
  {
    name: 'sent, expired unseen → new ones with the same limit',
    sent: { cuFactor: 2, lastValidBlockHeight: 100, count: 1 },
    chain: { height: 101, statuses: [null] },
    then: { type: 'create', cuFactor: 2, afterFailure: null },
  },
  {
    name: 'one failed on chain → new ones with twice the limit, even while valid',
    sent: { cuFactor: 2, lastValidBlockHeight: 100, count: 2 },
    chain: {
      height: 50,
      statuses: [
        { err: null, finalized: true },
        { err: OOC, finalized: false },
      ],
    },
    then: { type: 'create', cuFactor: 4, afterFailure: OOC },
  },
  {
    name: 'failed again at the ceiling → the factor stays at its most',
    sent: { cuFactor: MAX_CREATION_CU_FACTOR, lastValidBlockHeight: 100, count: 1 },
    chain: { height: 50, statuses: [{ err: OOC, finalized: false }] },
    then: { type: 'create', cuFactor: MAX_CREATION_CU_FACTOR, afterFailure: OOC },
  },
];

for (const c of creationCases) {
  test(`decideCreations: ${c.name}`, (t) => {
    t.deepEqual(decideCreations(c.sent, c.chain), c.then);
  });
}

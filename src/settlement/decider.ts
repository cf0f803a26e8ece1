// The settlement executor's rules, as a pure decider (issue 17): observations in, actions out.
//
// No clock, no database, no chain: `decide` reads what the shell (executor.ts) observed — the
// settlement row, its stored attempts, the trade's orders and, as far as the rules need them, what
// the chain said — and answers with the actions to take. When a rule needs an observation that is
// not there yet, the answer is a single `observe` action naming it; the shell makes that look-up
// (RPC, outside any transaction) and asks again with it added. So the decider also decides which
// RPC calls a step makes, in which order, and the step makes no others:
//
//   chain     block height, THEN the statuses of every stored signature (only when there are any)
//   logs      the logs of the latest attempt when it failed on chain (out of compute units?)
//   accounts  which token accounts the settlement credits are missing (before a new attempt)
//   build     a fresh blockhash and the signed transaction of the new attempt
//
// The rules (src/settlement/README.md, "The executor"):
//   1. CONFIRMED, or FAILED and its orders invalidated: nothing. FAILED not yet: `invalidate`.
//   2. an attempt landed without error → `landed` (MINED, and CONFIRMED once finalized) and the
//      statuses the book has not heard of yet (`report`);
//   3. the latest landed with an error: out of compute units → a new attempt with the compute-unit
//      limit and the priority fee doubled; any other error → `fail`, blaming the order of the wallet
//      whose instruction failed when the chain names it, else every order of the trade;
//   4. the latest did not land: blockhash still valid → `resend` the same bytes; expired → a new
//      attempt (fresh blockhash);
//   5. no new attempt past `maxAttempts` (→ `fail`); none while a credited account is missing
//      (→ `prepare`, no status reported); a new attempt reports RETRYING when it follows one.
import { BUDGET_INSTRUCTIONS, MAX_COMPUTE_UNITS, type Destination } from '../chain/settlement-tx.ts';

export type SettlementStatus = 'MATCHED' | 'MINED' | 'RETRYING' | 'CONFIRMED' | 'FAILED';
export type Outcome = 'landed' | 'out_of_compute' | 'failed' | 'expired';

/** The settlement row, as the step found it under its lease. */
export interface SettlementView {
  status: SettlementStatus;
  reconciled: boolean;
  /** compute-unit limit of the latest attempt (0: none yet, estimate it) */
  cuLimit: number;
  cuPrice: bigint;
  /** the `culprits` column: until the trade fails, the latest attempt's blame list (instruction
   *  index − BUDGET_INSTRUCTIONS → its party's order, or null); once FAILED, the orders to invalidate */
  blame: (string | null)[];
}

export interface AttemptView {
  attempt: number;
  signature: string;
  lastValidBlockHeight: number;
}

/** What the chain says of one stored signature: null, never seen (not landed). */
export type SignatureView = { err: unknown; finalized: boolean } | null;

export interface Observations {
  row: SettlementView;
  /** stored attempts, in order */
  attempts: AttemptView[];
  /** every order of the trade (taker first); [] when the read model does not have it */
  orders: string[];
  maxAttempts: number;
  /** block height read BEFORE the statuses, and the status of each attempt (same order) */
  chain?: { height: number; statuses: SignatureView[] };
  /** logs of the latest attempt's transaction ([] when the chain gave none) */
  logs?: string[];
  /** credited token accounts that do not exist */
  missing?: Destination[];
  /** the new attempt: signed (ok), or why it cannot be built */
  build?: { ok: true } | { ok: false; error: string };
  /** the trades read model shows the trade FAILED (the book has the failure on the ledger) */
  ledgerFailed?: boolean;
}

export type Need = 'chain' | 'logs' | 'accounts' | 'build' | 'ledger';

export type Action =
  | { type: 'observe'; need: Need; cuLimit?: number | null; cuPrice?: bigint }
  | { type: 'mark'; attempt: number; outcome: Outcome }
  | { type: 'landed'; attempt: number; signature: string; finalized: boolean }
  | { type: 'report'; status: 'MINED' | 'CONFIRMED' | 'RETRYING'; transactionHash: string; attempt: number; reason?: string }
  | { type: 'resend'; attempt: number; signature: string }
  | { type: 'prepare'; missing: Destination[] }
  | { type: 'send'; attempt: number; status: 'MATCHED' | 'RETRYING'; cuLimit: number | null; cuPrice: bigint }
  | { type: 'fail'; reason: string; orders: string[]; transactionHash: string; attempt: number }
  | { type: 'invalidate'; orders: string[] }
  | { type: 'wait' };

/** True when a failed transaction ran out of compute units (as the SVM reports it). */
export function outOfCompute(err: unknown, logs: string[] = []): boolean {
  const ie = (err as any)?.InstructionError;
  if (ie && (ie[1] === 'ProgramFailedToComplete' || ie[1] === 'ComputationalBudgetExceeded')) {
    return logs.length === 0 || logs.some((l) => /exceeded CUs meter|compute units|Computational budget exceeded/i.test(l));
  }
  return logs.some((l) => /exceeded CUs meter|Computational budget exceeded/i.test(l));
}

/** The orders to blame for a failed transaction: the failing instruction's party, else all of them. */
export function culpritsOf(err: unknown, blame: (string | null)[], orders: string[]): string[] {
  const ie = (err as any)?.InstructionError;
  const who = Array.isArray(ie) && typeof ie[0] === 'number' ? blame[ie[0] - BUDGET_INSTRUCTIONS] : null;
  return who ? [who] : [...new Set(orders)];
}

const observe = (need: Need, o: Partial<Extract<Action, { type: 'observe' }>> = {}): Action[] => [{ type: 'observe', need, ...o }];

/** The actions of one step, given what it observed so far (see the file's head). */
export function decide(o: Observations): Action[] {
  const { row, attempts } = o;
  if (row.status === 'CONFIRMED') return [];
  if (row.status === 'FAILED') {
    if (row.reconciled) return [];
    if (o.ledgerFailed === undefined) return observe('ledger');
    // the book has not put the failure on the ledger yet: look again later
    return o.ledgerFailed ? [{ type: 'invalidate', orders: row.blame.filter((x): x is string => !!x) }] : [{ type: 'wait' }];
  }
  if (attempts.length && !o.chain) return observe('chain');
  const statuses = o.chain?.statuses ?? [];

  const landed = attempts.findIndex((_, i) => statuses[i] && statuses[i]!.err === null);
  if (landed >= 0) {
    const a = attempts[landed];
    const finalized = statuses[landed]!.finalized;
    const news: ('MINED' | 'CONFIRMED')[] = [];
    if (row.status !== 'MINED') news.push('MINED');
    if (finalized) news.push('CONFIRMED');
    return [
      { type: 'landed', attempt: a.attempt, signature: a.signature, finalized },
      ...news.map((status) => ({ type: 'report' as const, status, transactionHash: a.signature, attempt: a.attempt })),
    ];
  }

  const out: Action[] = [];
  const last = attempts.at(-1);
  let cuLimit = row.cuLimit;
  let cuPrice = row.cuPrice;
  let retrying: { transactionHash: string; attempt: number; reason: string } | null = null;
  if (last) {
    const st = statuses[attempts.length - 1];
    let why: string;
    if (st && st.err) {
      if (o.logs === undefined) return observe('logs');
      if (!outOfCompute(st.err, o.logs)) {
        return [
          { type: 'mark', attempt: last.attempt, outcome: 'failed' },
          {
            type: 'fail',
            reason: `settlement transaction failed: ${JSON.stringify(st.err)}`,
            orders: culpritsOf(st.err, row.blame, o.orders),
            transactionHash: last.signature,
            attempt: last.attempt,
          },
        ];
      }
      out.push({ type: 'mark', attempt: last.attempt, outcome: 'out_of_compute' });
      cuLimit = Math.min(MAX_COMPUTE_UNITS, cuLimit * 2);
      cuPrice = cuPrice * 2n;
      why = 'out of compute units';
    } else if (o.chain!.height <= last.lastValidBlockHeight) {
      // In flight (or lost on the way): the same bytes again; it lands once at most.
      return [{ type: 'resend', attempt: last.attempt, signature: last.signature }];
    } else {
      out.push({ type: 'mark', attempt: last.attempt, outcome: 'expired' });
      why = 'blockhash expired before the transaction landed';
    }
    if (attempts.length >= o.maxAttempts) {
      return [
        ...out,
        {
          type: 'fail',
          reason: `gave up after ${attempts.length} attempts: ${why}`,
          orders: [...new Set(o.orders)],
          transactionHash: last.signature,
          attempt: last.attempt,
        },
      ];
    }
    retrying = { transactionHash: last.signature, attempt: last.attempt, reason: why };
  }

  // A new attempt: every account it credits must exist first (no status reported until then).
  if (o.missing === undefined) return observe('accounts');
  if (o.missing.length) return [...out, { type: 'prepare', missing: o.missing }];
  if (retrying) out.push({ type: 'report', status: 'RETRYING', ...retrying });
  const limit = cuLimit || null; // null: the shell estimates it from the instructions
  if (o.build === undefined) return observe('build', { cuLimit: limit, cuPrice });
  if (!o.build.ok) {
    return [
      ...out,
      {
        type: 'fail',
        reason: `settlement transaction cannot be built: ${o.build.error}`,
        orders: [...new Set(o.orders)],
        transactionHash: '',
        attempt: attempts.length,
      },
    ];
  }
  return [
    ...out,
    { type: 'send', attempt: attempts.length + 1, status: attempts.length ? 'RETRYING' : 'MATCHED', cuLimit: limit, cuPrice },
  ];
}

/** The most the compute-unit limit of preparatory transactions is multiplied by after failures. */
export const MAX_CREATION_CU_FACTOR = 64;

export type CreationAction =
  | { type: 'observe' }
  /** the ones sent can still land: send again (same bytes) those the chain has not seen */
  | { type: 'resend'; indexes: number[] }
  /** new preparatory transactions, their compute-unit limit multiplied by `cuFactor` */
  | { type: 'create'; cuFactor: number; afterFailure: unknown };

/**
 * The `prepare` action's own rule: the preparatory transactions this node last sent for the trade
 * (memory only: none after a restart) and what the chain says of them (height read first) →
 * wait for them (re-sending those not seen), or send new ones, after a failure on chain with twice
 * the compute-unit limit. They move no funds, so this needs none of the exactly-once care above.
 */
export function decideCreations(
  sent: { cuFactor: number; lastValidBlockHeight: number; count: number } | undefined,
  chain?: { height: number; statuses: SignatureView[] },
): CreationAction {
  if (!sent) return { type: 'create', cuFactor: 1, afterFailure: null };
  if (!chain) return { type: 'observe' };
  const failed = chain.statuses.find((st) => st?.err);
  if (!failed && chain.height <= sent.lastValidBlockHeight) {
    const indexes = [...Array(sent.count).keys()].filter((i) => !chain.statuses[i]);
    return { type: 'resend', indexes };
  }
  return failed
    ? { type: 'create', cuFactor: Math.min(sent.cuFactor * 2, MAX_CREATION_CU_FACTOR), afterFailure: failed.err }
    : { type: 'create', cuFactor: sent.cuFactor, afterFailure: null };
}

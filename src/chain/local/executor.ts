// Executes one transaction against the SVM state, instruction by instruction: instructions of the
// parlay program run in the TypeScript emulator, ComputeBudget ones only set the budget, all others
// run natively in LiteSVM. The transaction is atomic: on any failure every account it names goes
// back to its state after the fee was taken. A simulation rolls back the fee as well.
import { PublicKey, VersionedTransaction, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { PARLAY_PROGRAM_ID } from '../idl.ts';
import { isComputeBudget, readBudget, transactionFee } from './compute-budget.ts';
import { ComputeMeter, ProgramContext, type IxAccount } from './parlay/context.ts';
import { runParlayInstruction } from './parlay/emulator.ts';
import type { AccountState, CompiledInner, SvmAccess } from './svm-access.ts';
import { tokenBalances, type TokenBalance } from './token-info.ts';
import type { InstructionErrorJson, TransactionErrorJson } from './tx-errors.ts';

export interface ExecOptions {
  simulate: boolean;
  sigVerify: boolean;
  clock: { slot: bigint; unixTimestamp: bigint };
  /** fault: the first instruction that meters compute runs out one unit short of what it needs */
  exhaustCompute?: boolean;
  /** simulateTransaction's `accounts.addresses`: their state after execution is returned */
  returnAccounts?: PublicKey[];
}

export interface InnerInstructionJson {
  index: number;
  instructions: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }[];
}

export interface ExecResult {
  /** false when the transaction was refused before execution: it never lands and pays nothing */
  landed: boolean;
  err: TransactionErrorJson | null;
  logs: string[];
  unitsConsumed: number;
  fee: bigint;
  preBalances: number[];
  postBalances: number[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  innerInstructions: InnerInstructionJson[];
  returnedAccounts?: (AccountState | null)[];
}

interface StepResult {
  err: TransactionErrorJson | null;
  logs: string[];
  units: number;
  inner: CompiledInner[];
}

const refused = (err: TransactionErrorJson): ExecResult => ({
  landed: false,
  err,
  logs: [],
  unitsConsumed: 0,
  fee: 0n,
  preBalances: [],
  postBalances: [],
  preTokenBalances: [],
  postTokenBalances: [],
  innerInstructions: [],
});

export function verifySignatures(tx: VersionedTransaction): boolean {
  const msg = tx.message.serialize();
  const keys = tx.message.staticAccountKeys;
  for (let i = 0; i < tx.message.header.numRequiredSignatures; i++) {
    const sig = tx.signatures[i];
    if (!sig || !keys[i] || !nacl.sign.detached.verify(msg, sig, keys[i].toBytes())) return false;
  }
  return true;
}

export class Executor {
  constructor(
    readonly svm: SvmAccess,
    readonly parlayProgramId: PublicKey = PARLAY_PROGRAM_ID,
  ) {}

  execute(tx: VersionedTransaction, opts: ExecOptions): ExecResult {
    const message = tx.message;
    if (message.addressTableLookups.length > 0) return refused('AddressLookupTableNotFound');
    if (opts.sigVerify && !verifySignatures(tx)) return refused('SignatureFailure');
    const keys = message.staticAccountKeys;
    const metas = keys.map((pubkey, i) => ({ pubkey, isSigner: message.isAccountSigner(i), isWritable: message.isAccountWritable(i) }));
    const instructions = message.compiledInstructions.map((ci) => ({
      programId: keys[ci.programIdIndex],
      accounts: ci.accountKeyIndexes.map((k) => metas[k]),
      data: Buffer.from(ci.data),
    }));
    if (instructions.some((ix) => !ix.programId || ix.accounts.some((a) => !a))) return refused('InvalidAccountIndex');
    const budget = readBudget(instructions);
    if (typeof budget !== 'object' || !('limit' in budget)) return refused(budget);
    const fee = transactionFee(message.header.numRequiredSignatures, budget);
    const payer = keys[0];
    const payerAcc = this.svm.get(payer);
    if (!payerAcc) return refused('AccountNotFound');
    if (payerAcc.lamports < fee) return refused('InsufficientFundsForFee');

    const pre = this.svm.snapshot(keys);
    const preAccounts = keys.map((k) => pre.get(k.toBase58()) ?? null);
    this.svm.addLamports(payer, -fee);
    const afterFee = this.svm.snapshot(keys);

    const logs: string[] = [];
    const innerInstructions: InnerInstructionJson[] = [];
    let remaining = budget.limit;
    let exhaust = !!opts.exhaustCompute;
    let err: TransactionErrorJson | null = null;
    for (const [i, ix] of instructions.entries()) {
      if (isComputeBudget(ix.programId)) {
        logs.push(`Program ${ix.programId.toBase58()} invoke [1]`, `Program ${ix.programId.toBase58()} success`);
        continue;
      }
      let step: StepResult;
      if (exhaust) {
        exhaust = false;
        const snap = this.svm.snapshot(keys);
        const dry = this.step(i, ix, remaining, payer, opts);
        this.svm.restore(snap);
        step = this.step(i, ix, Math.max(0, dry.units - 1), payer, opts);
      } else {
        step = this.step(i, ix, remaining, payer, opts);
      }
      logs.push(...step.logs);
      remaining = Math.max(0, remaining - step.units);
      const mapped = this.mapInner(i, step.inner, keys);
      if (mapped.instructions.length > 0) innerInstructions.push(mapped);
      if (step.err) {
        err = step.err;
        break;
      }
    }
    if (err) this.svm.restore(afterFee);

    const postAccounts = keys.map((k) => this.svm.get(k));
    const result: ExecResult = {
      landed: true,
      err,
      logs,
      unitsConsumed: budget.limit - remaining,
      fee,
      preBalances: preAccounts.map((a) => Number(a?.lamports ?? 0n)),
      postBalances: postAccounts.map((a) => Number(a?.lamports ?? 0n)),
      preTokenBalances: tokenBalances(this.svm, preAccounts),
      postTokenBalances: tokenBalances(this.svm, postAccounts),
      innerInstructions,
      returnedAccounts: opts.returnAccounts?.map((k) => this.svm.get(k)),
    };
    if (opts.simulate) this.svm.restore(pre);
    return result;
  }

  private step(
    i: number,
    ix: { programId: PublicKey; accounts: IxAccount[]; data: Buffer },
    limit: number,
    payer: PublicKey,
    opts: ExecOptions,
  ): StepResult {
    if (ix.programId.equals(this.parlayProgramId)) {
      const ctx = new ProgramContext(this.svm, ix.programId, ix.accounts, ix.data, opts.clock, new ComputeMeter(limit), payer);
      const r = runParlayInstruction(ctx);
      return { err: r.err === null ? null : { InstructionError: [i, r.err] }, logs: r.logs, units: r.unitsConsumed, inner: r.inner };
    }
    const native: TransactionInstruction = {
      programId: ix.programId,
      data: ix.data,
      keys: ix.accounts.map((a) => ({ pubkey: a.pubkey, isSigner: a.isSigner, isWritable: a.isWritable })),
    } as TransactionInstruction;
    const r = this.svm.runNative([native], payer, limit);
    let err = r.err;
    if (err && typeof err === 'object' && 'InstructionError' in err)
      err = { InstructionError: [i, err.InstructionError[1] as InstructionErrorJson] };
    return { err, logs: r.logs, units: r.unitsConsumed, inner: r.inner[0] ?? [] };
  }

  /** Inner instructions in the message's index space (those naming an account outside it are left out). */
  private mapInner(index: number, inner: CompiledInner[], keys: PublicKey[]): InnerInstructionJson {
    const pos = new Map(keys.map((k, i) => [k.toBase58(), i]));
    const instructions: InnerInstructionJson['instructions'] = [];
    for (const ii of inner) {
      const programIdIndex = pos.get(ii.programId.toBase58());
      const accounts = ii.accounts.map((a) => pos.get(a.toBase58()));
      if (programIdIndex === undefined || accounts.some((a) => a === undefined)) continue;
      instructions.push({ programIdIndex, accounts: accounts as number[], data: bs58.encode(ii.data), stackHeight: ii.stackHeight });
    }
    return { index, instructions };
  }
}

// ComputeBudget instructions of a transaction: its compute-unit limit and price, and its fee.
import { ComputeBudgetProgram, SystemProgram, type PublicKey } from '@solana/web3.js';
import { LAMPORTS_PER_SIGNATURE } from './svm-access.ts';
import type { InstructionErrorJson, TransactionErrorJson } from './tx-errors.ts';

export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
export const DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT = 200_000;
export const BUILTIN_INSTRUCTION_COMPUTE_UNIT_LIMIT = 3_000;
/** Units a ComputeBudget instruction itself consumes. */
export const COMPUTE_BUDGET_IX_UNITS = 150;

export interface Budget {
  limit: number;
  microLamportsPerUnit: bigint;
  priorityFee: bigint;
}

export function isComputeBudget(programId: PublicKey): boolean {
  return programId.equals(ComputeBudgetProgram.programId);
}

/** Reads the budget from the instructions, or the error a validator gives for bad ones. */
export function readBudget(instructions: { programId: PublicKey; data: Buffer }[]): Budget | TransactionErrorJson {
  let limit: number | undefined;
  let price: bigint | undefined;
  let defaultLimit = 0;
  const seen = new Set<number>();
  for (const [i, ix] of instructions.entries()) {
    if (!isComputeBudget(ix.programId)) {
      defaultLimit += ix.programId.equals(SystemProgram.programId)
        ? BUILTIN_INSTRUCTION_COMPUTE_UNIT_LIMIT
        : DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT;
      continue;
    }
    const kind = ix.data[0];
    const bad: TransactionErrorJson = { InstructionError: [i, 'InvalidInstructionData' as InstructionErrorJson] };
    if (kind === undefined) return bad;
    if (seen.has(kind)) return { DuplicateInstruction: i };
    seen.add(kind);
    if (kind === 2) {
      if (ix.data.length !== 5) return bad;
      limit = ix.data.readUInt32LE(1);
    } else if (kind === 3) {
      if (ix.data.length !== 9) return bad;
      price = ix.data.readBigUInt64LE(1);
    } else if (kind === 1 || kind === 4) {
      if (ix.data.length !== 5) return bad;
    } else {
      return bad;
    }
  }
  const effective = Math.min(limit ?? defaultLimit, MAX_COMPUTE_UNIT_LIMIT);
  const micro = price ?? 0n;
  const priorityFee = (micro * BigInt(effective) + 999_999n) / 1_000_000n;
  return { limit: effective, microLamportsPerUnit: micro, priorityFee };
}

export function transactionFee(numSignatures: number, budget: Budget): bigint {
  return LAMPORTS_PER_SIGNATURE * BigInt(numSignatures) + budget.priorityFee;
}

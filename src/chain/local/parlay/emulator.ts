// Entry point of the emulated parlay program: Anchor's dispatch (discriminator, `Instruction: X`
// log, argument decoding, account flag checks), the handler, and the runtime's invoke / consumed /
// success / failed log lines.
import { coder, idl } from '../../idl.ts';
import { displayInstructionError, type InstructionErrorJson } from '../tx-errors.ts';
import type { CompiledInner } from '../svm-access.ts';
import { anchorError, ComputeExhausted, ProgramFailure } from './anchor-errors.ts';
import { checkAccountFlags } from './accounts.ts';
import type { ProgramContext } from './context.ts';
import { initializeConfig, seedVault, updateConfig, withdrawVault } from './config-handlers.ts';
import { claimParlay, createParlay, settleLeg, voidParlay } from './parlay-handlers.ts';

type Handler = (ctx: ProgramContext, args: Record<string, unknown>) => void;
const HANDLERS: Record<string, Handler> = {
  initialize_config: initializeConfig,
  update_config: updateConfig,
  seed_vault: seedVault,
  withdraw_vault: withdrawVault,
  create_parlay: createParlay,
  settle_leg: settleLeg,
  claim_parlay: claimParlay,
  void_parlay: voidParlay,
};

/** Units the entrypoint and dispatch cost. */
const ENTRY_UNITS = 1500;

export interface EmulatedResult {
  err: InstructionErrorJson | null;
  logs: string[];
  inner: CompiledInner[];
  unitsConsumed: number;
}

const pascal = (name: string) =>
  name
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

function dispatch(ctx: ProgramContext): void {
  ctx.meter.consume(ENTRY_UNITS);
  if (ctx.data.length < 8) throw anchorError('InstructionMissing');
  const spec = idl.instructions.find((ix) => Buffer.from(ix.discriminator).equals(ctx.data.subarray(0, 8)));
  if (!spec) throw anchorError('InstructionFallbackNotFound');
  ctx.msg(`Instruction: ${pascal(spec.name)}`);
  let decoded: { name: string; data: object } | null = null;
  try {
    decoded = coder.instruction.decode(ctx.data);
  } catch {
    decoded = null;
  }
  if (!decoded) throw anchorError('InstructionDidNotDeserialize');
  checkAccountFlags(ctx, spec.accounts as { name: string; signer?: boolean; writable?: boolean }[]);
  HANDLERS[spec.name](ctx, decoded.data as Record<string, unknown>);
}

/** Runs one top-level instruction of the program. Account changes are left for the caller to keep or roll back. */
export function runParlayInstruction(ctx: ProgramContext): EmulatedResult {
  const pid = ctx.programId.toBase58();
  const start = ctx.meter.remaining;
  const head = [`Program ${pid} invoke [1]`];
  const consumed = () => `Program ${pid} consumed ${start - ctx.meter.remaining} of ${start} compute units`;
  try {
    dispatch(ctx);
    return {
      err: null,
      logs: [...head, ...ctx.logs, consumed(), `Program ${pid} success`],
      inner: ctx.inner,
      unitsConsumed: start - ctx.meter.remaining,
    };
  } catch (e) {
    if (e instanceof ComputeExhausted) {
      ctx.meter.remaining = 0;
      return {
        err: 'ProgramFailedToComplete',
        logs: [...head, ...ctx.logs, consumed(), `Program ${pid} failed: exceeded CUs meter at BPF instruction`],
        inner: ctx.inner,
        unitsConsumed: start,
      };
    }
    if (e instanceof ProgramFailure) {
      return {
        err: e.err,
        logs: [...head, ...ctx.logs, ...e.logs, consumed(), `Program ${pid} failed: ${displayInstructionError(e.err)}`],
        inner: ctx.inner,
        unitsConsumed: start - ctx.meter.remaining,
      };
    }
    const text = e instanceof Error ? e.message : String(e);
    return {
      err: 'ProgramFailedToComplete',
      logs: [...head, ...ctx.logs, `Program log: panicked: ${text}`, consumed(), `Program ${pid} failed: Program failed to complete`],
      inner: ctx.inner,
      unitsConsumed: start - ctx.meter.remaining,
    };
  }
}

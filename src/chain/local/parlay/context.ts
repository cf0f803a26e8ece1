// What an instruction of the emulated program sees while it runs: its accounts, the clock, a
// compute meter, logs, events, and CPIs into native programs (run by LiteSVM at stack height 2).
import { PublicKey, type TransactionInstruction } from '@solana/web3.js';
import type { AccountState, CompiledInner, SvmAccess } from '../svm-access.ts';
import { ComputeExhausted, ProgramFailure } from './anchor-errors.ts';
import { encodeEvent } from './state.ts';

export interface IxAccount {
  pubkey: PublicKey;
  isSigner: boolean;
  isWritable: boolean;
}

/** Units a CPI costs on top of the callee's own consumption. */
const INVOKE_UNITS = 1000;
const LOG_UNITS = 100;

export class ComputeMeter {
  constructor(public remaining: number) {}
  consume(units: number): void {
    if (units > this.remaining) {
      this.remaining = 0;
      throw new ComputeExhausted('exceeded CUs meter');
    }
    this.remaining -= units;
  }
}

export class ProgramContext {
  readonly logs: string[] = [];
  /** CPIs made by this instruction, in order (stack height 2 and deeper). */
  readonly inner: CompiledInner[] = [];

  constructor(
    readonly svm: SvmAccess,
    readonly programId: PublicKey,
    readonly accounts: IxAccount[],
    readonly data: Buffer,
    readonly clock: { slot: bigint; unixTimestamp: bigint },
    readonly meter: ComputeMeter,
    /** pays the signature fee of the native sub-transactions used for CPIs */
    readonly feePayer: PublicKey,
  ) {}

  account(i: number): IxAccount {
    return this.accounts[i];
  }

  read(key: PublicKey): AccountState | null {
    return this.svm.get(key);
  }

  /** Writes an account this instruction was given as writable. */
  write(key: PublicKey, state: AccountState): void {
    const meta = this.accounts.find((a) => a.pubkey.equals(key));
    if (!meta) throw new ProgramFailure('MissingAccount');
    if (!meta.isWritable) throw new ProgramFailure('ReadonlyDataModified');
    this.svm.set(key, state);
  }

  msg(text: string): void {
    this.meter.consume(LOG_UNITS);
    this.logs.push(`Program log: ${text}`);
  }

  emit(name: string, data: object): void {
    const payload = encodeEvent(name, data);
    this.meter.consume(LOG_UNITS + Math.ceil(payload.length / 4));
    this.logs.push(`Program data: ${payload}`);
  }

  /**
   * Invokes a native program with the given instruction, signing for `pdaSigners` as invoke_signed
   * would. Its logs are nested one level deeper; a failure fails this instruction with the same error.
   */
  invoke(ix: TransactionInstruction): void {
    this.meter.consume(INVOKE_UNITS);
    for (const k of ix.keys) {
      const given = this.accounts.find((a) => a.pubkey.equals(k.pubkey));
      const isPda = !PublicKey.isOnCurve(k.pubkey.toBytes());
      // The IDL passes no vault-authority account, so a read-only PDA signer of the program is
      // accepted without being among the instruction's accounts (an emulation liberty).
      if (!given) {
        if (isPda && !k.isWritable) continue;
        throw new ProgramFailure('MissingAccount');
      }
      if ((k.isWritable && !given.isWritable) || (k.isSigner && !given.isSigner && !isPda)) throw new ProgramFailure('PrivilegeEscalation');
    }
    const res = this.svm.runNative([ix], this.feePayer, this.meter.remaining);
    for (const line of res.logs) this.logs.push(line.replace(/ invoke \[(\d+)\]$/, (_, d: string) => ` invoke [${Number(d) + 1}]`));
    this.inner.push({ programId: ix.programId, accounts: ix.keys.map((k) => k.pubkey), data: Buffer.from(ix.data), stackHeight: 2 });
    for (const list of res.inner) for (const ii of list) this.inner.push({ ...ii, stackHeight: ii.stackHeight + 1 });
    const exhausted = res.logs.some((l) => l.endsWith('exceeded CUs meter at BPF instruction'));
    if (exhausted) {
      this.meter.remaining = 0;
      throw new ComputeExhausted('exceeded CUs meter in CPI');
    }
    this.meter.consume(Math.min(res.unitsConsumed, this.meter.remaining));
    if (res.err) {
      if (typeof res.err === 'object' && 'InstructionError' in res.err) throw new ProgramFailure(res.err.InstructionError[1]);
      throw new ProgramFailure('GenericError');
    }
  }
}

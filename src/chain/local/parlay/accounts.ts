// Account validation of the emulated program, with the errors Anchor's constraints give.
import { PublicKey } from '@solana/web3.js';
import { ACCOUNT_SIZE, AccountLayout, MINT_SIZE, TOKEN_PROGRAM_ID, type RawAccount } from '@solana/spl-token';
import { findProgramPda } from '../../program.ts';
import { anchorError, ProgramFailure } from './anchor-errors.ts';
import type { ProgramContext } from './context.ts';
import {
  decodeConfig,
  decodeParlay,
  encodeConfig,
  encodeParlay,
  isConfigAccount,
  isParlayAccount,
  type ConfigState,
  type ParlayState,
} from './state.ts';

export interface IdlAccountSpec {
  name: string;
  signer?: boolean;
  writable?: boolean;
}

/** The checks Anchor makes for every account from its flags: enough keys, signer, mut. */
export function checkAccountFlags(ctx: ProgramContext, specs: IdlAccountSpec[]): void {
  if (ctx.accounts.length < specs.length) throw anchorError('AccountNotEnoughKeys');
  specs.forEach((spec, i) => {
    const a = ctx.accounts[i];
    if (spec.signer && !a.isSigner) throw anchorError('AccountNotSigner', spec.name);
    if (spec.writable && !a.isWritable) throw anchorError('ConstraintMut', spec.name);
  });
}

/** Checks that account `i` is the PDA of `seeds`; returns its bump. */
export function checkPda(ctx: ProgramContext, i: number, name: string, seeds: (string | Buffer)[]): number {
  const [expected, bump] = findProgramPda(seeds, ctx.programId);
  const actual = ctx.accounts[i].pubkey;
  if (!actual.equals(expected)) {
    const e = anchorError('ConstraintSeeds', name);
    throw new ProgramFailure(e.err, [
      ...e.logs,
      'Program log: Left:',
      `Program log: ${actual.toBase58()}`,
      'Program log: Right:',
      `Program log: ${expected.toBase58()}`,
    ]);
  }
  return bump;
}

export function checkProgram(ctx: ProgramContext, i: number, expected: PublicKey): void {
  if (!ctx.accounts[i].pubkey.equals(expected)) {
    const e = anchorError('InvalidProgramId');
    throw new ProgramFailure(e.err, [
      ...e.logs,
      'Program log: Left:',
      `Program log: ${ctx.accounts[i].pubkey.toBase58()}`,
      'Program log: Right:',
      `Program log: ${expected.toBase58()}`,
    ]);
  }
}

export function loadConfig(ctx: ProgramContext, i: number): ConfigState {
  checkPda(ctx, i, 'config', ['config']);
  const acc = ctx.read(ctx.accounts[i].pubkey);
  if (!acc) throw anchorError('AccountNotInitialized', 'config');
  if (!acc.owner.equals(ctx.programId)) throw anchorError('AccountOwnedByWrongProgram', 'config');
  if (!isConfigAccount(acc.data)) throw anchorError('AccountDiscriminatorMismatch', 'config');
  return decodeConfig(acc.data);
}

export function storeConfig(ctx: ProgramContext, i: number, state: ConfigState): void {
  const key = ctx.accounts[i].pubkey;
  const acc = ctx.read(key)!;
  ctx.write(key, { ...acc, data: encodeConfig(state) });
}

export function loadParlay(ctx: ProgramContext, i: number): ParlayState {
  const acc = ctx.read(ctx.accounts[i].pubkey);
  if (!acc) throw anchorError('AccountNotInitialized', 'parlay');
  if (!acc.owner.equals(ctx.programId)) throw anchorError('AccountOwnedByWrongProgram', 'parlay');
  if (!isParlayAccount(acc.data)) throw anchorError('AccountDiscriminatorMismatch', 'parlay');
  const parlay = decodeParlay(acc.data);
  checkPda(ctx, i, 'parlay', ['parlay', u64(parlay.parlayId)]);
  return parlay;
}

export function storeParlay(ctx: ProgramContext, i: number, state: ParlayState): void {
  const key = ctx.accounts[i].pubkey;
  const acc = ctx.read(key)!;
  ctx.write(key, { ...acc, data: encodeParlay(state) });
}

export function u64(v: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
}

/** A token account of the collateral mint (and of `owner`, when given). */
export function loadTokenAccount(ctx: ProgramContext, i: number, name: string, mint: PublicKey, owner?: PublicKey): RawAccount {
  const acc = ctx.read(ctx.accounts[i].pubkey);
  if (!acc) throw anchorError('AccountNotInitialized', name);
  if (!acc.owner.equals(TOKEN_PROGRAM_ID)) throw anchorError('AccountOwnedByWrongProgram', name);
  if (acc.data.length !== ACCOUNT_SIZE) throw anchorError('AccountDidNotDeserialize', name);
  const token = AccountLayout.decode(acc.data);
  if (!token.mint.equals(mint)) throw anchorError('ConstraintTokenMint', name);
  if (owner && !token.owner.equals(owner)) throw anchorError('ConstraintTokenOwner', name);
  return token;
}

export function checkMint(ctx: ProgramContext, i: number, name: string): void {
  const acc = ctx.read(ctx.accounts[i].pubkey);
  if (!acc) throw anchorError('AccountNotInitialized', name);
  if (!acc.owner.equals(TOKEN_PROGRAM_ID)) throw anchorError('AccountOwnedByWrongProgram', name);
  if (acc.data.length !== MINT_SIZE) throw anchorError('AccountDidNotDeserialize', name);
}

export function tokenBalance(ctx: ProgramContext, key: PublicKey): bigint {
  const acc = ctx.read(key);
  return acc && acc.data.length === ACCOUNT_SIZE ? AccountLayout.decode(acc.data).amount : 0n;
}

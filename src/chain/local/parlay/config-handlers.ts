// initialize_config, update_config, seed_vault, withdraw_vault of the emulated program.
import { SystemProgram } from '@solana/web3.js';
import { ACCOUNT_SIZE, createInitializeAccount3Instruction, createTransferInstruction, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { findProgramPda } from '../../program.ts';
import { anchorError } from './anchor-errors.ts';
import { checkMint, checkPda, checkProgram, loadConfig, loadTokenAccount, storeConfig, tokenBalance } from './accounts.ts';
import type { ProgramContext } from './context.ts';
import { bn, configFields, CONFIG_ACCOUNT_SIZE, encodeConfig, type ConfigState } from './state.ts';
import { BPS_ONE } from './math.ts';

type Args = Record<string, unknown>;

/** Values the pricing needs to stay meaningful; anything else fails as a raw constraint. */
function checkConfigValues(c: ConfigState): void {
  if (c.houseEdgeBps >= 10_000 || c.exposureRatioBps > 10_000 || c.minStake > c.maxStake) throw anchorError('ConstraintRaw', 'config');
}
const big = (v: unknown) => BigInt((v as { toString(): string }).toString());
const optBig = (v: unknown) => (v === null || v === undefined ? undefined : big(v));

export function initializeConfig(ctx: ProgramContext, args: Args): void {
  const [authority, config, vault, mint] = [0, 1, 2, 3].map((i) => ctx.account(i).pubkey);
  const bump = checkPda(ctx, 1, 'config', ['config']);
  const vaultBump = checkPda(ctx, 2, 'vault', ['vault']);
  const [vaultAuthority, vaultAuthorityBump] = findProgramPda(['vault_authority'], ctx.programId);
  checkMint(ctx, 3, 'collateral_mint');
  checkProgram(ctx, 4, SystemProgram.programId);
  checkProgram(ctx, 5, TOKEN_PROGRAM_ID);
  ctx.meter.consume(8000);
  ctx.invoke(
    SystemProgram.createAccount({
      fromPubkey: authority,
      newAccountPubkey: config,
      lamports: Number(ctx.svm.rentExempt(CONFIG_ACCOUNT_SIZE)),
      space: CONFIG_ACCOUNT_SIZE,
      programId: ctx.programId,
    }),
  );
  ctx.invoke(
    SystemProgram.createAccount({
      fromPubkey: authority,
      newAccountPubkey: vault,
      lamports: Number(ctx.svm.rentExempt(ACCOUNT_SIZE)),
      space: ACCOUNT_SIZE,
      programId: TOKEN_PROGRAM_ID,
    }),
  );
  ctx.invoke(createInitializeAccount3Instruction(vault, mint, vaultAuthority));
  const state: ConfigState = {
    authority,
    collateralMint: mint,
    vault,
    maxLegs: args.max_legs as number,
    minStake: big(args.min_stake),
    maxStake: big(args.max_stake),
    maxPayoutCap: big(args.max_payout_cap),
    exposureRatioBps: args.exposure_ratio_bps as number,
    houseEdgeBps: args.house_edge_bps as number,
    paused: false,
    totalStaked: 0n,
    totalPaidOut: 0n,
    totalExposure: 0n,
    bump,
    vaultBump,
    vaultAuthorityBump,
  };
  checkConfigValues(state);
  const acc = ctx.read(config)!;
  ctx.write(config, { ...acc, data: encodeConfig(state) });
  ctx.emit('ConfigInitialized', { config: configFields(state) });
}

export function updateConfig(ctx: ProgramContext, args: Args): void {
  const state = loadConfig(ctx, 1);
  if (!ctx.account(0).pubkey.equals(state.authority)) throw anchorError('Unauthorized');
  ctx.meter.consume(3000);
  const next: ConfigState = {
    ...state,
    maxLegs: (args.max_legs as number | null) ?? state.maxLegs,
    minStake: optBig(args.min_stake) ?? state.minStake,
    maxStake: optBig(args.max_stake) ?? state.maxStake,
    maxPayoutCap: optBig(args.max_payout_cap) ?? state.maxPayoutCap,
    exposureRatioBps: (args.exposure_ratio_bps as number | null) ?? state.exposureRatioBps,
    houseEdgeBps: (args.house_edge_bps as number | null) ?? state.houseEdgeBps,
    paused: (args.paused as boolean | null) ?? state.paused,
  };
  checkConfigValues(next);
  storeConfig(ctx, 1, next);
  ctx.emit('ConfigUpdated', { config: configFields(next) });
}

export function seedVault(ctx: ProgramContext, args: Args): void {
  const amount = big(args.amount);
  const state = loadConfig(ctx, 2);
  checkPda(ctx, 3, 'vault', ['vault']);
  checkProgram(ctx, 4, TOKEN_PROGRAM_ID);
  loadTokenAccount(ctx, 1, 'depositor_token', state.collateralMint);
  ctx.meter.consume(3000);
  const [depositor, depositorToken, , vault] = [0, 1, 2, 3].map((i) => ctx.account(i).pubkey);
  ctx.invoke(createTransferInstruction(depositorToken, vault, depositor, amount));
  ctx.emit('VaultSeeded', { depositor, amount: bn(amount), vault_balance: bn(tokenBalance(ctx, vault)) });
}

export function withdrawVault(ctx: ProgramContext, args: Args): void {
  const amount = big(args.amount);
  const state = loadConfig(ctx, 2);
  checkPda(ctx, 3, 'vault', ['vault']);
  checkProgram(ctx, 4, TOKEN_PROGRAM_ID);
  loadTokenAccount(ctx, 1, 'recipient_token', state.collateralMint);
  if (!ctx.account(0).pubkey.equals(state.authority)) throw anchorError('Unauthorized');
  ctx.meter.consume(3000);
  const [recipientToken, vault] = [ctx.account(1).pubkey, ctx.account(3).pubkey];
  const balance = tokenBalance(ctx, vault);
  // What stays must still back the open exposure (an amount above the balance fails in the transfer).
  if (amount <= balance && (BigInt(state.exposureRatioBps) * (balance - amount)) / BPS_ONE < state.totalExposure) {
    throw anchorError('ExposureLimitExceeded');
  }
  const [vaultAuthority] = findProgramPda(['vault_authority'], ctx.programId);
  ctx.invoke(createTransferInstruction(vault, recipientToken, vaultAuthority, amount));
  ctx.emit('VaultWithdrawn', { recipient: recipientToken, amount: bn(amount), vault_balance: bn(tokenBalance(ctx, vault)) });
}

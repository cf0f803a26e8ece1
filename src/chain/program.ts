// Addresses and instructions of the parlay program, shared by the service and the local chain.
// Every instruction is encoded by Anchor's BorshInstructionCoder from the IDL (snake_case names and
// args as the IDL spells them); account order is exactly the IDL's.
import { BN } from '@coral-xyz/anchor';
import { PublicKey, SystemProgram, TransactionInstruction, type AccountMeta } from '@solana/web3.js';
import { TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { coder, idl, PARLAY_PROGRAM_ID } from './idl.ts';

export { PARLAY_PROGRAM_ID };

export const CONFIG_SEED = 'config';
export const VAULT_SEED = 'vault';
export const VAULT_AUTHORITY_SEED = 'vault_authority';
export const PARLAY_SEED = 'parlay';
/** Seed of the placeholder market addresses used by development tools (not a program account). */
export const MARKET_SEED = 'market';

/** Parlay status codes on chain (SPEC 3.1). */
export const ParlayStatus = { Active: 0, Won: 1, Lost: 2, Claimed: 3, Voided: 4, Refunded: 5 } as const;
/** Leg status codes: 0 while pending; settle_leg takes 1, 2 or 3. */
export const LegStatus = { Pending: 0, Won: 1, Lost: 2, Voided: 3 } as const;
/** Outcome codes of LegInput. */
export const Outcome = { Yes: 0, No: 1 } as const;

export type U64 = bigint | number;

export function u64Le(value: U64): Buffer {
  const buf = Buffer.alloc(8);
  buf.writeBigUInt64LE(BigInt(value));
  return buf;
}

/** PDA of the program with its bump. */
export function findProgramPda(seeds: (Buffer | Uint8Array | string)[], programId: PublicKey = PARLAY_PROGRAM_ID): [PublicKey, number] {
  return PublicKey.findProgramAddressSync(
    seeds.map((s) => (typeof s === 'string' ? Buffer.from(s) : s)),
    programId,
  );
}

export function findConfigPda(programId: PublicKey = PARLAY_PROGRAM_ID): PublicKey {
  return findProgramPda([CONFIG_SEED], programId)[0];
}
/** The vault: an SPL token account of the collateral mint, owned by the vault-authority PDA. */
export function findVaultPda(programId: PublicKey = PARLAY_PROGRAM_ID): PublicKey {
  return findProgramPda([VAULT_SEED], programId)[0];
}
export function findVaultAuthorityPda(programId: PublicKey = PARLAY_PROGRAM_ID): PublicKey {
  return findProgramPda([VAULT_AUTHORITY_SEED], programId)[0];
}
export function findParlayPda(parlayId: U64, programId: PublicKey = PARLAY_PROGRAM_ID): PublicKey {
  return findProgramPda([PARLAY_SEED, u64Le(parlayId)], programId)[0];
}
/** Deterministic placeholder address for a market id (development tools only). */
export function marketAddressFor(marketId: U64, programId: PublicKey = PARLAY_PROGRAM_ID): PublicKey {
  return findProgramPda([MARKET_SEED, u64Le(marketId)], programId)[0];
}

// ---- argument types -------------------------------------------------------------------------

export interface LegInputArgs {
  /** on_chain_market_id */
  marketId: U64;
  /** market account address */
  market: PublicKey;
  /** 0 = YES, 1 = NO */
  outcome: number;
  /** probability at entry, fixed point 1e6 (0 < p < 1_000_000) */
  probability: number;
}

export interface InitializeConfigArgs {
  maxLegs: number;
  minStake: U64;
  maxStake: U64;
  maxPayoutCap: U64;
  exposureRatioBps: number;
  houseEdgeBps: number;
}

export interface UpdateConfigArgs {
  maxLegs?: number | null;
  minStake?: U64 | null;
  maxStake?: U64 | null;
  maxPayoutCap?: U64 | null;
  exposureRatioBps?: number | null;
  houseEdgeBps?: number | null;
  paused?: boolean | null;
}

export interface CreateParlayArgs {
  parlayId: U64;
  stake: U64;
  legs: LegInputArgs[];
}

export interface SettleLegArgs {
  legIndex: number;
  /** 1 = won, 2 = lost, 3 = voided */
  legStatus: number;
}

interface ProgramOpt {
  programId?: PublicKey;
}

export interface InitializeConfigAccounts extends ProgramOpt {
  authority: PublicKey;
  collateralMint: PublicKey;
}
export interface UpdateConfigAccounts extends ProgramOpt {
  authority: PublicKey;
}
export interface SeedVaultAccounts extends ProgramOpt {
  depositor: PublicKey;
  depositorToken: PublicKey;
  amount: U64;
}
export interface WithdrawVaultAccounts extends ProgramOpt {
  authority: PublicKey;
  recipientToken: PublicKey;
  amount: U64;
}
export interface CreateParlayAccounts extends ProgramOpt, CreateParlayArgs {
  user: PublicKey;
  userToken: PublicKey;
}
export interface SettleLegAccounts extends ProgramOpt, SettleLegArgs {
  resolver: PublicKey;
  parlayId: U64;
  market: PublicKey;
}
export interface ClaimParlayAccounts extends ProgramOpt {
  user: PublicKey;
  userToken: PublicKey;
  parlayId: U64;
}
export interface VoidParlayAccounts extends ProgramOpt {
  authority: PublicKey;
  userToken: PublicKey;
  parlayId: U64;
}

// ---- encoding -------------------------------------------------------------------------------

const bn = (v: U64) => new BN(BigInt(v).toString());
const optBn = (v: U64 | null | undefined) => (v === null || v === undefined ? null : bn(v));
const opt = <T>(v: T | null | undefined): T | null => (v === undefined ? null : v);

/** Leg in the IDL's LegInput shape, for Anchor's coder. */
export function legToIdl(leg: LegInputArgs) {
  return { market_id: bn(leg.marketId), market: leg.market, outcome: leg.outcome, probability: leg.probability };
}

function instruction(name: string, args: object, metas: [PublicKey, boolean, boolean][], programId?: PublicKey): TransactionInstruction {
  const spec = idl.instructions.find((ix) => ix.name === name);
  if (!spec || spec.accounts.length !== metas.length) throw new Error(`instruction ${name}: account list does not match the IDL`);
  const keys: AccountMeta[] = metas.map(([pubkey, isSigner, isWritable]) => ({ pubkey, isSigner, isWritable }));
  return new TransactionInstruction({ programId: programId ?? PARLAY_PROGRAM_ID, keys, data: coder.instruction.encode(name, args) });
}

export function initializeConfigInstruction(a: InitializeConfigAccounts & InitializeConfigArgs): TransactionInstruction {
  const pid = a.programId ?? PARLAY_PROGRAM_ID;
  return instruction(
    'initialize_config',
    {
      max_legs: a.maxLegs,
      min_stake: bn(a.minStake),
      max_stake: bn(a.maxStake),
      max_payout_cap: bn(a.maxPayoutCap),
      exposure_ratio_bps: a.exposureRatioBps,
      house_edge_bps: a.houseEdgeBps,
    },
    [
      [a.authority, true, true],
      [findConfigPda(pid), false, true],
      [findVaultPda(pid), false, true],
      [a.collateralMint, false, false],
      [SystemProgram.programId, false, false],
      [TOKEN_PROGRAM_ID, false, false],
    ],
    pid,
  );
}

export function updateConfigInstruction(a: UpdateConfigAccounts & UpdateConfigArgs): TransactionInstruction {
  const pid = a.programId ?? PARLAY_PROGRAM_ID;
  return instruction(
    'update_config',
    {
      max_legs: opt(a.maxLegs),
      min_stake: optBn(a.minStake),
      max_stake: optBn(a.maxStake),
      max_payout_cap: optBn(a.maxPayoutCap),
      exposure_ratio_bps: opt(a.exposureRatioBps),
      house_edge_bps: opt(a.houseEdgeBps),
      paused: opt(a.paused),
    },
    [
      [a.authority, true, false],
      [findConfigPda(pid), false, true],
    ],
    pid,
  );
}

export function seedVaultInstruction(a: SeedVaultAccounts): TransactionInstruction {
  const pid = a.programId ?? PARLAY_PROGRAM_ID;
  return instruction(
    'seed_vault',
    { amount: bn(a.amount) },
    [
      [a.depositor, true, true],
      [a.depositorToken, false, true],
      [findConfigPda(pid), false, false],
      [findVaultPda(pid), false, true],
      [TOKEN_PROGRAM_ID, false, false],
    ],
    pid,
  );
}

export function withdrawVaultInstruction(a: WithdrawVaultAccounts): TransactionInstruction {
  const pid = a.programId ?? PARLAY_PROGRAM_ID;
  return instruction(
    'withdraw_vault',
    { amount: bn(a.amount) },
    [
      [a.authority, true, false],
      [a.recipientToken, false, true],
      [findConfigPda(pid), false, false],
      [findVaultPda(pid), false, true],
      [TOKEN_PROGRAM_ID, false, false],
    ],
    pid,
  );
}

export function createParlayInstruction(a: CreateParlayAccounts): TransactionInstruction {
  const pid = a.programId ?? PARLAY_PROGRAM_ID;
  return instruction(
    'create_parlay',
    { parlay_id: bn(a.parlayId), stake: bn(a.stake), legs: a.legs.map(legToIdl) },
    [
      [a.user, true, true],
      [a.userToken, false, true],
      [findConfigPda(pid), false, true],
      [findVaultPda(pid), false, true],
      [findParlayPda(a.parlayId, pid), false, true],
      [SystemProgram.programId, false, false],
      [TOKEN_PROGRAM_ID, false, false],
    ],
    pid,
  );
}

export function settleLegInstruction(a: SettleLegAccounts): TransactionInstruction {
  const pid = a.programId ?? PARLAY_PROGRAM_ID;
  return instruction(
    'settle_leg',
    { leg_index: a.legIndex, leg_status: a.legStatus },
    [
      [a.resolver, true, false],
      [findConfigPda(pid), false, true],
      [findParlayPda(a.parlayId, pid), false, true],
      [a.market, false, false],
    ],
    pid,
  );
}

export function claimParlayInstruction(a: ClaimParlayAccounts): TransactionInstruction {
  const pid = a.programId ?? PARLAY_PROGRAM_ID;
  return instruction(
    'claim_parlay',
    {},
    [
      [a.user, true, true],
      [a.userToken, false, true],
      [findConfigPda(pid), false, true],
      [findVaultPda(pid), false, true],
      [findParlayPda(a.parlayId, pid), false, true],
      [TOKEN_PROGRAM_ID, false, false],
    ],
    pid,
  );
}

export function voidParlayInstruction(a: VoidParlayAccounts): TransactionInstruction {
  const pid = a.programId ?? PARLAY_PROGRAM_ID;
  return instruction(
    'void_parlay',
    {},
    [
      [a.authority, true, false],
      [a.userToken, false, true],
      [findConfigPda(pid), false, true],
      [findVaultPda(pid), false, true],
      [findParlayPda(a.parlayId, pid), false, true],
      [TOKEN_PROGRAM_ID, false, false],
    ],
    pid,
  );
}

// ---- account decoding -----------------------------------------------------------------------

export interface ParlayAccountData {
  parlayId: bigint;
  user: PublicKey;
  stake: bigint;
  /** fixed point 1e12 */
  combinedProbability: bigint;
  potentialPayout: bigint;
  actualPayout: bigint;
  status: number;
  legs: { marketId: bigint; market: PublicKey; outcome: number; probability: number }[];
  legStatus: number[];
  createdAt: bigint;
  bump: number;
}

/** Decodes a ParlayAccount (Anchor account data, discriminator included). */
export function decodeParlayAccount(data: Buffer | Uint8Array): ParlayAccountData {
  const raw = coder.accounts.decode('ParlayAccount', Buffer.from(data));
  const big = (v: { toString(): string }) => BigInt(v.toString());
  return {
    parlayId: big(raw.parlay_id),
    user: raw.user,
    stake: big(raw.stake),
    combinedProbability: big(raw.combined_probability),
    potentialPayout: big(raw.potential_payout),
    actualPayout: big(raw.actual_payout),
    status: raw.status,
    legs: raw.legs.map((l: { market_id: BN; market: PublicKey; outcome: number; probability: number }) => ({
      marketId: big(l.market_id),
      market: l.market,
      outcome: l.outcome,
      probability: l.probability,
    })),
    legStatus: [...(raw.leg_status as Buffer)],
    createdAt: big(raw.created_at),
    bump: raw.bump,
  };
}

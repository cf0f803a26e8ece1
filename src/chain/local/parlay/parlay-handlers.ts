// create_parlay, settle_leg, claim_parlay, void_parlay of the emulated program (SPEC 3.1 and 8).
//
// Exposure: a parlay's exposure is its potential_payout; total_exposure sums it over Active parlays
// (released when the parlay leaves Active), as the sample events show. A creation fails with
// ExposureLimitExceeded when exposure_ratio_bps/1e4 × vault balance (before the stake comes in)
// − total_exposure is below the new parlay's potential_payout.
import { PublicKey, SystemProgram } from '@solana/web3.js';
import { createTransferInstruction, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { findProgramPda, LegStatus, legToIdl, ParlayStatus } from '../../program.ts';
import { anchorError, ProgramFailure } from './anchor-errors.ts';
import {
  checkPda,
  checkProgram,
  loadConfig,
  loadParlay,
  loadTokenAccount,
  storeConfig,
  storeParlay,
  tokenBalance,
  u64,
} from './accounts.ts';
import type { ProgramContext } from './context.ts';
import { BPS_ONE, combinedProbability, payoutFor, PROBABILITY_ONE, wonPayout } from './math.ts';
import { bn, encodeParlay, type ParlayState } from './state.ts';

type Args = Record<string, unknown>;
interface IdlLeg {
  market_id: { toString(): string };
  market: PublicKey;
  outcome: number;
  probability: number;
}
const big = (v: unknown) => BigInt((v as { toString(): string }).toString());

export function createParlay(ctx: ProgramContext, args: Args): void {
  const parlayId = big(args.parlay_id);
  const stake = big(args.stake);
  const legs = (args.legs as IdlLeg[]).map((l) => ({
    marketId: big(l.market_id),
    market: l.market,
    outcome: l.outcome,
    probability: l.probability,
  }));
  const [user, userToken, , vault, parlayKey] = [0, 1, 2, 3, 4].map((i) => ctx.account(i).pubkey);
  const config = loadConfig(ctx, 2);
  checkPda(ctx, 3, 'vault', ['vault']);
  const bump = checkPda(ctx, 4, 'parlay', ['parlay', u64(parlayId)]);
  checkProgram(ctx, 5, SystemProgram.programId);
  checkProgram(ctx, 6, TOKEN_PROGRAM_ID);
  loadTokenAccount(ctx, 1, 'user_token', config.collateralMint);

  const draft: ParlayState = {
    parlayId,
    user,
    stake,
    combinedProbability: 0n,
    potentialPayout: 0n,
    actualPayout: 0n,
    status: ParlayStatus.Active,
    legs,
    legStatus: legs.map(() => LegStatus.Pending),
    createdAt: ctx.clock.unixTimestamp,
    bump,
  };
  ctx.meter.consume(6000 + 2500 * legs.length);

  if (config.paused) throw anchorError('VaultPaused');
  if (legs.length < 2) throw anchorError('TooFewLegs');
  if (legs.length > config.maxLegs) throw anchorError('TooManyLegs');
  const markets = new Set<string>();
  for (const leg of legs) {
    const key = leg.marketId.toString();
    if (markets.has(key) || markets.has(leg.market.toBase58())) throw anchorError('DuplicateMarket');
    markets.add(key);
    markets.add(leg.market.toBase58());
  }
  if (legs.some((l) => l.probability <= 0 || BigInt(l.probability) >= PROBABILITY_ONE)) throw anchorError('InvalidProbability');
  if (stake < config.minStake) throw anchorError('StakeBelowMinimum');
  if (stake > config.maxStake) throw anchorError('StakeAboveMaximum');
  const combined = combinedProbability(legs.map((l) => l.probability));
  const payout = payoutFor(stake, combined, config.houseEdgeBps);
  if (payout === null || payout > config.maxPayoutCap) throw anchorError('PayoutCapExceeded');
  const balanceBefore = tokenBalance(ctx, vault);
  const headroom = (BigInt(config.exposureRatioBps) * balanceBefore) / BPS_ONE - config.totalExposure;
  if (headroom < payout) throw anchorError('ExposureLimitExceeded');

  const space = encodeParlay(draft).length;
  ctx.invoke(
    SystemProgram.createAccount({
      fromPubkey: user,
      newAccountPubkey: parlayKey,
      lamports: Number(ctx.svm.rentExempt(space)),
      space,
      programId: ctx.programId,
    }),
  );
  ctx.invoke(createTransferInstruction(userToken, vault, user, stake));
  const parlay: ParlayState = { ...draft, combinedProbability: combined, potentialPayout: payout };
  storeParlay(ctx, 4, parlay);
  const next = { ...config, totalStaked: config.totalStaked + stake, totalExposure: config.totalExposure + payout };
  storeConfig(ctx, 2, next);
  ctx.emit('ParlayCreated', {
    parlay_id: bn(parlayId),
    user,
    stake: bn(stake),
    combined_probability: bn(combined),
    potential_payout: bn(payout),
    legs: legs.map(legToIdl),
    vault_balance: bn(tokenBalance(ctx, vault)),
    total_staked: bn(next.totalStaked),
    total_exposure: bn(next.totalExposure),
    created_at: bn(ctx.clock.unixTimestamp),
  });
}

export function settleLeg(ctx: ProgramContext, args: Args): void {
  const legIndex = args.leg_index as number;
  const legStatus = args.leg_status as number;
  const config = loadConfig(ctx, 1);
  const parlay = loadParlay(ctx, 2);
  if (!ctx.account(0).pubkey.equals(config.authority)) throw anchorError('Unauthorized');
  ctx.meter.consume(5000);
  if (parlay.status !== ParlayStatus.Active) throw anchorError('ParlayNotActive');
  if (legIndex >= parlay.legs.length) throw new ProgramFailure('InvalidArgument');
  if (![LegStatus.Won, LegStatus.Lost, LegStatus.Voided].includes(legStatus as 1 | 2 | 3)) throw new ProgramFailure('InvalidArgument');
  if (parlay.legStatus[legIndex] !== LegStatus.Pending) throw anchorError('LegAlreadySettled');
  if (!ctx.account(3).pubkey.equals(parlay.legs[legIndex].market)) throw anchorError('ConstraintAddress', 'market');

  const statuses = parlay.legStatus.slice();
  statuses[legIndex] = legStatus;
  const won = statuses.filter((s) => s === LegStatus.Won).length;
  const lost = statuses.filter((s) => s === LegStatus.Lost).length;
  const voided = statuses.filter((s) => s === LegStatus.Voided).length;
  const resolved = won + lost + voided;
  let status: number = ParlayStatus.Active;
  let actual = 0n;
  if (lost > 0) status = ParlayStatus.Lost;
  else if (resolved === statuses.length && voided === statuses.length) {
    status = ParlayStatus.Voided;
    actual = parlay.stake;
  } else if (resolved === statuses.length) {
    status = ParlayStatus.Won;
    actual = wonPayout(
      parlay.stake,
      parlay.potentialPayout,
      parlay.legs.map((l) => l.probability),
      statuses,
      config.houseEdgeBps,
    );
  }
  const totalExposure = status === ParlayStatus.Active ? config.totalExposure : config.totalExposure - parlay.potentialPayout;
  storeParlay(ctx, 2, { ...parlay, legStatus: statuses, status, actualPayout: actual });
  storeConfig(ctx, 1, { ...config, totalExposure });
  ctx.emit('LegSettled', {
    parlay_id: bn(parlay.parlayId),
    leg_index: legIndex,
    market_id: bn(parlay.legs[legIndex].marketId),
    leg_status: legStatus,
    parlay_status: status,
    legs_won: won,
    legs_lost: lost,
    legs_resolved: resolved,
    actual_payout: bn(actual),
    total_exposure: bn(totalExposure),
    settled_at: bn(ctx.clock.unixTimestamp),
  });
}

function payOut(ctx: ProgramContext, userTokenIndex: number, amount: bigint): void {
  const [vaultAuthority] = findProgramPda(['vault_authority'], ctx.programId);
  ctx.invoke(createTransferInstruction(ctx.account(3).pubkey, ctx.account(userTokenIndex).pubkey, vaultAuthority, amount));
}

export function claimParlay(ctx: ProgramContext): void {
  const config = loadConfig(ctx, 2);
  checkPda(ctx, 3, 'vault', ['vault']);
  const parlay = loadParlay(ctx, 4);
  checkProgram(ctx, 5, TOKEN_PROGRAM_ID);
  if (!ctx.account(0).pubkey.equals(parlay.user)) throw anchorError('Unauthorized');
  loadTokenAccount(ctx, 1, 'user_token', config.collateralMint, parlay.user);
  ctx.meter.consume(5000);
  if (parlay.status !== ParlayStatus.Won && parlay.status !== ParlayStatus.Voided) throw anchorError('ParlayNotClaimable');
  const amount = parlay.actualPayout;
  payOut(ctx, 1, amount);
  storeParlay(ctx, 4, { ...parlay, status: ParlayStatus.Claimed });
  const next = { ...config, totalPaidOut: config.totalPaidOut + amount };
  storeConfig(ctx, 2, next);
  ctx.emit('ParlayClaimed', {
    parlay_id: bn(parlay.parlayId),
    user: parlay.user,
    amount: bn(amount),
    vault_balance: bn(tokenBalance(ctx, ctx.account(3).pubkey)),
    total_paid_out: bn(next.totalPaidOut),
    claimed_at: bn(ctx.clock.unixTimestamp),
  });
}

export function voidParlay(ctx: ProgramContext): void {
  const config = loadConfig(ctx, 2);
  checkPda(ctx, 3, 'vault', ['vault']);
  const parlay = loadParlay(ctx, 4);
  checkProgram(ctx, 5, TOKEN_PROGRAM_ID);
  if (!ctx.account(0).pubkey.equals(config.authority)) throw anchorError('Unauthorized');
  loadTokenAccount(ctx, 1, 'user_token', config.collateralMint, parlay.user);
  ctx.meter.consume(5000);
  if (parlay.status !== ParlayStatus.Active) throw anchorError('ParlayNotActive');
  const refund = parlay.stake;
  payOut(ctx, 1, refund);
  storeParlay(ctx, 4, { ...parlay, status: ParlayStatus.Refunded, actualPayout: refund });
  const next = { ...config, totalPaidOut: config.totalPaidOut + refund, totalExposure: config.totalExposure - parlay.potentialPayout };
  storeConfig(ctx, 2, next);
  ctx.emit('ParlayVoided', {
    parlay_id: bn(parlay.parlayId),
    refund: bn(refund),
    vault_balance: bn(tokenBalance(ctx, ctx.account(3).pubkey)),
    total_paid_out: bn(next.totalPaidOut),
    total_exposure: bn(next.totalExposure),
    voided_at: bn(ctx.clock.unixTimestamp),
  });
}

// Parlay pricing in fixed point: probabilities 1e6, combined probability 1e12, amounts in micro-units.
import { combinedProbability, payoutFor } from '../../../parlay/pricing.ts';

export { PROBABILITY_ONE, COMBINED_ONE, BPS_ONE, combinedProbability, payoutFor } from '../../../parlay/pricing.ts';

/**
 * Payout of a won parlay: voided legs count as won with probability 1, so the payout is recomputed
 * over the legs that won (never above potential_payout, since dropping legs raises the combined
 * probability). With no voided leg it is exactly potential_payout.
 */
export function wonPayout(
  stake: bigint,
  potentialPayout: bigint,
  probabilities: number[],
  legStatus: number[],
  houseEdgeBps: number,
): bigint {
  if (!legStatus.includes(3)) return potentialPayout;
  const kept = probabilities.filter((_, i) => legStatus[i] !== 3);
  const payout = payoutFor(stake, combinedProbability(kept), houseEdgeBps) ?? potentialPayout;
  return payout < potentialPayout ? payout : potentialPayout;
}

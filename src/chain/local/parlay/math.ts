// Parlay pricing in fixed point: probabilities 1e6, combined probability 1e12, amounts in micro-units.
export const PROBABILITY_ONE = 1_000_000n;
export const COMBINED_ONE = 1_000_000_000_000n;
export const BPS_ONE = 10_000n;

/** Product of the leg probabilities (1e6 each) as a 1e12 fixed-point number, floored. */
export function combinedProbability(probabilities: number[]): bigint {
  let num = 1n;
  let den = 1n;
  for (const p of probabilities) {
    num *= BigInt(p);
    den *= PROBABILITY_ONE;
  }
  return (num * COMBINED_ONE) / den;
}

/** stake × (1 − edge) / combined, floored; null when the combined probability is zero. */
export function payoutFor(stake: bigint, combined: bigint, houseEdgeBps: number): bigint | null {
  if (combined <= 0n) return null;
  return (stake * (BPS_ONE - BigInt(houseEdgeBps)) * COMBINED_ONE) / (BPS_ONE * combined);
}

/**
 * Payout of a won parlay: voided legs count as won with probability 1, so the payout is recomputed
 * over the legs that won (never above potential_payout, since dropping legs raises the combined
 * probability). With no voided leg it is exactly potential_payout.
 */
export function wonPayout(stake: bigint, potentialPayout: bigint, probabilities: number[], legStatus: number[], houseEdgeBps: number): bigint {
  if (!legStatus.includes(3)) return potentialPayout;
  const kept = probabilities.filter((_, i) => legStatus[i] !== 3);
  const payout = payoutFor(stake, combinedProbability(kept), houseEdgeBps) ?? potentialPayout;
  return payout < potentialPayout ? payout : potentialPayout;
}

// The parlay program's pricing in fixed point, shared by everything that prices a parlay the way
// create_parlay does (the template refresh and quote helper, the local chain's program emulator):
// leg probabilities 1e6, combined probability 1e12 (floored product), amounts in micro-units.
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

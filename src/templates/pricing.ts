// Pure pricing of template legs and combos, in the program's fixed point: leg probabilities 1e6,
// combined probability 1e12 (floored product), payout = stake × (1 − edge) / combined (floored),
// the same arithmetic as the program's create_parlay (src/parlay/pricing.ts).
import { COMBINED_ONE, PROBABILITY_ONE, combinedProbability, payoutFor } from '../parlay/pricing.ts';

export { COMBINED_ONE, PROBABILITY_ONE, combinedProbability, payoutFor };

export type Outcome = 'YES' | 'NO';
export type ProbabilitySource = 'midpoint' | 'last_trade' | 'reference' | 'demo';

/** A book quote as the MarketBook's ReadQuote answers it (prices in micro). */
export interface BookQuote {
  yes?: { bid: { price: number } | null; ask: { price: number } | null } | null;
  no?: { bid: { price: number } | null; ask: { price: number } | null } | null;
  last?: { asset_id: string; price: number } | null;
}

export interface LegMarket {
  yes_token_id: string;
  no_token_id: string;
  /** the catalog's reference price of YES, micro; null when unset */
  reference_price: number | null;
}

/**
 * Best bid and ask of one outcome. With mint/merge matching the other outcome's book counts too at
 * 1 − its price (a NO bid at q is a YES ask at 1 − q, a NO ask at q a YES bid at 1 − q), as the
 * matching engine sees it.
 */
export function outcomeBidAsk(q: BookQuote, outcome: Outcome, mintMerge: boolean): { bid: number | null; ask: number | null } {
  const own = outcome === 'YES' ? q.yes : q.no;
  const other = outcome === 'YES' ? q.no : q.yes;
  let bid = own?.bid?.price ?? null;
  let ask = own?.ask?.price ?? null;
  if (mintMerge) {
    const ONE = Number(PROBABILITY_ONE);
    if (other?.ask) bid = Math.max(bid ?? 0, ONE - other.ask.price);
    if (other?.bid) ask = Math.min(ask ?? ONE, ONE - other.bid.price);
  }
  return { bid, ask };
}

/**
 * A leg's probability (micro): the midpoint of best bid and ask of the selected outcome (half a
 * micro rounds up), else the last trade price (seen from the selected outcome), else the catalog's
 * reference price (of YES; 1 − it for NO); null when there is none of them.
 */
export function legProbability(
  q: BookQuote | null,
  m: LegMarket,
  outcome: Outcome,
  mintMerge: boolean,
): { probability: number; source: ProbabilitySource } | null {
  const ONE = Number(PROBABILITY_ONE);
  if (q) {
    const { bid, ask } = outcomeBidAsk(q, outcome, mintMerge);
    if (bid !== null && ask !== null) return { probability: Math.floor((bid + ask + 1) / 2), source: 'midpoint' };
    if (q.last) {
      const token = outcome === 'YES' ? m.yes_token_id : m.no_token_id;
      return { probability: q.last.asset_id === token ? q.last.price : ONE - q.last.price, source: 'last_trade' };
    }
  }
  if (m.reference_price !== null)
    return { probability: outcome === 'YES' ? m.reference_price : ONE - m.reference_price, source: 'reference' };
  return null;
}

/** A fixed-point integer as a decimal string with exactly `places` places. */
export function fixed(v: bigint | number, places: number): string {
  const n = BigInt(v);
  const neg = n < 0n;
  const a = neg ? -n : n;
  const unit = 10n ** BigInt(places);
  const s = `${a / unit}.${(a % unit).toString().padStart(places, '0')}`;
  return neg ? `-${s}` : s;
}

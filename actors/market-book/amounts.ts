// Price, fee and reservation arithmetic (contracts/clob.md: the signed order, fees, reservation).
// Prices are micro-units of collateral per token unit; amounts are bigint micro-units.
import type { Reservation, Side } from './types.ts';
import { decimalToMicro as toMicro, MICRO } from '../../topics/units.ts';

/** Price 1.0 and one token or collateral unit, in micro-units. */
export const ONE = 1_000_000;
export const ONE_N = MICRO;
const FEE_DEN = 10_000n * ONE_N;

export function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Fee numerator of one leg, feeRateBps × min(p, 1 − p) × size; sum the legs, then feeOf once. */
export function feeUnits(feeRateBps: number, price: number, size: bigint): bigint {
  return BigInt(feeRateBps * Math.min(price, ONE - price)) * size;
}

/** Fee in collateral micro-units from summed fee units, rounded down (never above the exact fee). */
export function feeOf(units: bigint): bigint {
  return units / FEE_DEN;
}

/** taker fee = feeRateBps / 1e4 × min(p, 1 − p) × size, rounded down. */
export function takerFee(feeRateBps: number, price: number, size: bigint): bigint {
  return feeOf(feeUnits(feeRateBps, price, size));
}

/**
 * What an order holds with `remaining` tokens left: SELL the tokens themselves; BUY the collateral
 * ceil(price × remaining / 1e6). For a whole order that is its signed makerAmount (the edge only
 * accepts exact prices), and since every fill releases reservedFor(before) − reservedFor(after), the
 * releases over an order's life sum to exactly its makerAmount.
 */
export function reservedFor(side: Side, price: number, remaining: bigint): bigint {
  if (side === 'SELL') return remaining;
  return (BigInt(price) * remaining + ONE_N - 1n) / ONE_N;
}

/** The reservation an order takes when accepted: collateral for BUY, its tokens for SELL. */
export function reservationOf(o: { side: Side; tokenId: string; price: number; size: bigint }): Reservation {
  return { asset: o.side === 'BUY' ? 'collateral' : o.tokenId, amount: reservedFor(o.side, o.price, o.size) };
}

/** What a live order still holds (partly filled or not). */
export function remainingReservationOf(o: { side: Side; tokenId: string; price: number; remaining: bigint }): Reservation {
  return { asset: o.side === 'BUY' ? 'collateral' : o.tokenId, amount: reservedFor(o.side, o.price, o.remaining) };
}

/** The release that takes an order from `before` to `after` remaining tokens. */
export function releaseOf(o: { owner: string; side: Side; tokenId: string; price: number; inBook?: true }, before: bigint, after: bigint) {
  const amount =
    before === after ? 0n : o.side === 'SELL' ? before - after : reservedFor('BUY', o.price, before) - reservedFor('BUY', o.price, after);
  return { owner: o.owner, asset: o.side === 'BUY' ? 'collateral' : o.tokenId, amount, ...(o.inBook ? { inBook: true as const } : {}) };
}

/** "0.01" / 0.01 (decimal units, at most 6 places) → 10_000 micro-units; null when malformed. */
export function decimalToMicro(v: string | number): bigint | null {
  return toMicro(typeof v === 'number' ? (Number.isFinite(v) ? v.toFixed(6) : '') : v.trim());
}

// The units of every message and answer: amounts and prices travel as decimal strings of units
// ("0.55", "12.5") and are computed as integer micro-units (1e6 per unit), never as floats. The one
// place both directions are written; actors, projections, use cases and the client share it.
export const MICRO = 1_000_000n;

/** Micro-units → the shortest decimal string of units: 550000n → "0.55", -1500000n → "-1.5". */
export function microToDecimal(v: bigint | number | string): string {
  const n = BigInt(v);
  const a = n < 0n ? -n : n;
  const f = (a % MICRO).toString().padStart(6, '0').replace(/0+$/, '');
  return `${n < 0n ? '-' : ''}${a / MICRO}${f ? `.${f}` : ''}`;
}

/**
 * A decimal string of units with at most 6 places → micro-units; null when it is not one. Bounded
 * before any arithmetic: at most `maxWholeDigits` digits before the point (default 18), a sign only
 * with `negative`.
 */
export function decimalToMicro(v: string, o: { maxWholeDigits?: number; negative?: boolean } = {}): bigint | null {
  const m = new RegExp(`^(${o.negative ? '-?' : ''})(\\d{1,${o.maxWholeDigits ?? 18}})(?:\\.(\\d{1,6}))?$`).exec(v);
  if (!m) return null;
  const n = BigInt(m[2]) * MICRO + BigInt((m[3] ?? '').padEnd(6, '0'));
  return m[1] ? -n : n;
}

// B_ENV='NAME=value,…' of the ratio benches (bench/ingest-ratio.ts, bench/order-ratio.ts): the
// settings of an A/B run's B side, measured in every round next to the baseline.

/** The settings B_ENV names, or null when it is not set. */
export function bEnvOf(text: string | undefined): Record<string, string> | null {
  if (!text) return null;
  return Object.fromEntries(
    text.split(',').map((kv) => {
      const at = kv.indexOf('=');
      if (at <= 0) throw new Error(`B_ENV: "${kv}" is not NAME=value`);
      return [kv.slice(0, at), kv.slice(at + 1)];
    }),
  );
}

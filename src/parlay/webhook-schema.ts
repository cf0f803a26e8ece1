// The raw-transaction webhook body: one transaction or an array of them, bounded before any work.
// Only the fields the mirror reads are kept: unknown fields are stripped (never passed through,
// never serialized again), so nothing in the webhook path walks what the provider adds.
import bs58 from 'bs58';
import { z } from 'zod';

/** Transactions per delivery. */
export const MAX_TRANSACTIONS = 10_000;
/** Log lines per transaction (Solana keeps 10 KB of logs per transaction by default, then writes `Log truncated`). */
export const MAX_LOG_LINES = 10_000;
/** Characters per log line (the largest event of the program is about 4 KB of base64). */
export const MAX_LOG_LINE_CHARS = 16_384;
/** Signatures per transaction (a transaction of 1,232 bytes holds at most 19). */
export const MAX_SIGNATURES = 32;
/** A signature is the base58 text of 64 bytes: at most 88 characters. */
export const MAX_SIGNATURE_CHARS = 88;

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
const SIGNATURE_BYTES = 64;
/** The base58 text of 256^j, j = 0..64: the bounds of a j-byte number. */
const POW256 = Array.from({ length: SIGNATURE_BYTES + 1 }, (_, j) =>
  bs58.encode(Uint8Array.from({ length: j + 1 }, (_, i) => (i === 0 ? 1 : 0))),
);
/** Numeric order of two base58 texts without leading '1's: the alphabet is in ASCII order, so a longer text is larger and equal lengths compare as strings. */
const cmp58 = (a: string, b: string) => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0);

/**
 * The base58 text of 64 bytes, without decoding it: base58 keeps each leading zero byte as a leading
 * '1' and writes the rest as one number, so the text holds 64 bytes when, after z leading '1's,
 * that number has exactly 64 − z bytes (256^(63−z) ≤ n < 256^(64−z)). Linear in the text (decoding
 * it is quadratic: 14 µs a signature, the largest cost of validating a delivery).
 */
export function isSignature(s: string): boolean {
  if (s.length < SIGNATURE_BYTES || s.length > MAX_SIGNATURE_CHARS || !BASE58.test(s)) return false;
  let z = 0;
  while (z < s.length && s.charCodeAt(z) === 49 /* '1' */) z++;
  const rest = s.slice(z);
  const bytes = SIGNATURE_BYTES - z;
  if (bytes <= 0) return bytes === 0 && rest === '';
  return cmp58(rest, POW256[bytes - 1]) >= 0 && cmp58(rest, POW256[bytes]) < 0;
}

/** No NUL (PostgreSQL text cannot hold it) and no lone UTF-16 surrogate (no UTF-8 text holds it). */
const clean = (s: string) => !s.includes('\u0000') && (s as unknown as { isWellFormed(): boolean }).isWellFormed();

const signature = z
  .string()
  .max(MAX_SIGNATURE_CHARS, { error: `a signature has at most ${MAX_SIGNATURE_CHARS} characters` })
  .refine(isSignature, { error: 'a signature is the base58 text of 64 bytes' });

const logLine = z
  .string()
  .max(MAX_LOG_LINE_CHARS, { error: `a log line has at most ${MAX_LOG_LINE_CHARS} characters` })
  .refine(clean, { error: 'a log line holds no NUL character and no lone surrogate' });

const slotNumber = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

export const rawTransaction = z.object({
  slot: slotNumber,
  blockTime: z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).nullable().optional(),
  indexWithinBlock: slotNumber.optional(),
  meta: z.object({
    // Only compared with null: a failed transaction is skipped, its error never read.
    err: z.unknown().optional(),
    logMessages: z
      .array(logLine)
      .max(MAX_LOG_LINES, { error: `a transaction has at most ${MAX_LOG_LINES} log lines` })
      .nullable()
      .optional(),
  }),
  transaction: z.object({
    signatures: z.array(signature).min(1).max(MAX_SIGNATURES),
  }),
});

export const webhookBatch = z
  .array(rawTransaction)
  .max(MAX_TRANSACTIONS, { error: `a delivery has at most ${MAX_TRANSACTIONS} transactions` });
export const webhookBody = z.union([rawTransaction, webhookBatch]);

export type RawTransaction = z.infer<typeof rawTransaction>;

/**
 * The counts a delivery is bounded by, checked before the schema walks its elements (zod validates
 * every line before it compares an array's length): the reason a body is out of bounds, or null.
 */
export function outOfBounds(body: unknown): string | null {
  const txs = Array.isArray(body) ? body : [body];
  if (txs.length > MAX_TRANSACTIONS) return `a delivery has at most ${MAX_TRANSACTIONS} transactions`;
  for (const [i, tx] of txs.entries()) {
    const logs = (tx as { meta?: { logMessages?: unknown } } | null)?.meta?.logMessages;
    if (Array.isArray(logs) && logs.length > MAX_LOG_LINES)
      return `${Array.isArray(body) ? `${i}.` : ''}meta.logMessages: a transaction has at most ${MAX_LOG_LINES} log lines`;
  }
  return null;
}

// Request and answer of the market makers' mint and merge routes: the HTTP contract the routes
// validate with and the typed client reads.
import { z } from 'zod';

export const mintMergeBody = z.object({
  market: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'a market is a condition id: 0x + 64 hex digits')
    .transform((s) => s.toLowerCase()),
  amount: z
    .string()
    .regex(/^[1-9]\d{0,18}$/, 'amount is a positive integer of micro-units, as a decimal string')
    .transform((s) => BigInt(s)),
});

export const mintMergeResult = z
  .object({
    success: z.literal(true),
    operation: z.enum(['mint_tokens', 'merge_tokens']),
    market: z.string(),
    amount: z.string(),
    transaction_hash: z.string(),
  })
  .meta({ id: 'MintMergeResult' });

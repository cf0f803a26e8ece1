// The raw-transaction webhook body: one transaction or an array of them.
import { z } from 'zod';

export const rawTransaction = z.object({
  slot: z.number().int().nonnegative(),
  blockTime: z.number().int().nullable().optional(),
  indexWithinBlock: z.number().int().nonnegative().optional(),
  meta: z.object({
    err: z.unknown().optional(),
    logMessages: z.array(z.string()).nullable().optional(),
  }).passthrough(),
  transaction: z.object({
    signatures: z.array(z.string().min(1)).min(1),
    message: z.object({ accountKeys: z.array(z.unknown()).optional() }).passthrough().optional(),
  }).passthrough(),
}).passthrough();

export const webhookBody = z.union([rawTransaction, z.array(rawTransaction).max(10_000)]);

export type RawTransaction = z.infer<typeof rawTransaction>;

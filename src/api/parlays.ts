// Requests of the parlay routes (vault PATCH, parlay ids, list filters): the HTTP contract the routes
// validate with and the typed client reads.
import { z } from 'zod';
import { PARLAY_STATUSES } from '../parlay/queries.ts';
import { BIGINT_MAX, fitsBigint } from '../../topics/parlay-events.ts';

const status = z.enum(PARLAY_STATUSES);
/** Micro-units, stored as PostgreSQL bigint: 0..2^63-1; JSON numbers are exact only up to 2^53-1, larger ones come as strings. */
const AMOUNT = {
  error: `must be an integer from 0 to ${BIGINT_MAX} (a JSON integer up to ${Number.MAX_SAFE_INTEGER}, or a decimal string)`,
};
const amount = z
  .union(
    [
      z.number(AMOUNT).int(AMOUNT).nonnegative(AMOUNT),
      z
        .string(AMOUNT)
        .regex(/^\d{1,19}$/, AMOUNT)
        .refine(fitsBigint, AMOUNT),
    ],
    AMOUNT,
  )
  .transform((v) => v.toString());
const base58 = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'must be a base58 address');

export const vaultPatch = z
  .object({
    vault_address: base58.optional(),
    max_legs: z.number().int().min(2).max(255).optional(),
    max_payout_cap: amount.optional(),
    min_stake: amount.optional(),
    max_stake: amount.optional(),
    is_active: z.boolean().optional(),
  })
  .strict()
  .refine(
    (v) => Object.keys(v).length > 0,
    'give at least one of vault_address, max_legs, max_payout_cap, min_stake, max_stake, is_active',
  );

export const parlaysRequest = {
  /** Not a parlay id (nor one that can exist: beyond the bigint the mirror stores): the same 404 as a missing parlay. */
  params: z.object({
    parlayId: z
      .string()
      .regex(/^\d{1,19}$/)
      .refine(fitsBigint)
      .meta({ description: 'on-chain parlay id (integer)' }),
  }),
  user: z.object({ status: status.optional() }),
  admin: z.object({
    status: status.optional(),
    wallet: z.string().min(1).max(64).optional(),
    page: z.coerce.number().int().min(1).default(1),
  }),
};

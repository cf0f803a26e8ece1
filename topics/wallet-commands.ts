// Schemas of the commands on `wallet.commands` (v1), keyed by wallet address. Amounts are decimal
// strings of micro-units; `asset` is `collateral` or an outcome token id.
import { z } from 'zod';

const amount = z.string().regex(/^\d{1,20}$/);
const asset = z.string().min(1).max(64);
const balance = z.object({ amount, slot: z.number().int().nonnegative() });

export const walletCommand = z.discriminatedUnion('type', [
  /** Holds `amount` of `asset` for an order until it is confirmed resting, released, or its hold lapses. */
  z.object({ type: z.literal('Reserve'), orderId: z.string().min(1), asset, amount, market: z.string(), balance: balance.optional(), holdMs: z.number().int().positive().max(600_000) }),
  /** The order rests on its book: the hold no longer lapses. */
  z.object({ type: z.literal('Confirm'), orderId: z.string().min(1) }),
  /** Releases what the order still holds, or `amount` of it (a partial fill). */
  z.object({ type: z.literal('Release'), orderId: z.string().min(1), amount: amount.optional(), reason: z.string().max(64) }),
  /** An on-chain balance read at `slot`. */
  z.object({ type: z.literal('SeeBalance'), asset, balance }),
]);

export type WalletCommand = z.infer<typeof walletCommand>;

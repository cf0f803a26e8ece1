// The `wallet.commands` topic (v1), keyed by wallet address: the Wallet's commands as zod schemas
// and their reply. Amounts are decimal strings of micro-units; `asset` is `collateral` or an
// outcome token id. The runtime adds the envelope's time as `at` before the decider sees a command.
import { z } from 'zod';
import { TOPICS } from './names.ts';
import type { CancelReply, PlaceReply } from './clob-commands.ts';

/** The topic's name (before the deployment's prefix); its key is the wallet's address. */
export const WALLET_TOPIC = TOPICS.walletCommands;

const amount = z.string().regex(/^\d{1,20}$/);
const asset = z.string().min(1).max(64);
/** A token account as read at `slot`: its amount and, when known, its standing allowance (delegate and delegated amount). */
const balance = z.object({
  amount,
  slot: z.number().int().nonnegative(),
  delegate: z.string().min(1).max(64).nullable().optional(),
  delegatedAmount: amount.optional(),
});
const orderId = z.string().min(1);
/** A book's command to hand on (Decision.forward): its topic, key, idempotency id and the command. */
const handOn = z.object({
  topic: z.string().min(1).max(255),
  key: z.string().min(1).max(128),
  id: z.string().min(1).max(255),
  cmd: z.record(z.string(), z.unknown()),
});

export const walletCommand = z.discriminatedUnion('type', [
  /** Holds `amount` of `asset` for an order until it is confirmed resting, released, or its hold lapses. */
  z.object({
    type: z.literal('Reserve'),
    orderId: z.string().min(1),
    asset,
    amount,
    market: z.string(),
    balance: balance.optional(),
    holdMs: z.number().int().positive().max(600_000),
  }),
  /**
   * One pass (risk, then matching): holds `amount` for the order, for good (no lapse: the order is
   * sure to reach its book), and hands the book's command on to `book.topic` / `book.key` with
   * `book.id` as its idempotency key; the book answers the asker. What does not fit is answered
   * here, as a Reserve is. The hold is freed by the book's releases (fill, cancel, expiry, or its
   * refusal of the order). `delegate`: the allowance the order's warnings are checked against.
   */
  z.object({
    type: z.literal('PlaceOrder'),
    orderId,
    asset,
    amount,
    market: z.string().min(1).max(128),
    balance: balance.optional(),
    delegate: z.string().min(1).max(64).nullable(),
    book: handOn,
  }),
  /** The order rests on its book: the hold no longer lapses. */
  z.object({ type: z.literal('Confirm'), orderId: z.string().min(1) }),
  /** Releases what the order still holds, or `amount` of it (a partial fill). */
  z.object({ type: z.literal('Release'), orderId: z.string().min(1), amount: amount.optional(), reason: z.string().max(64) }),
  /**
   * Releases everything these orders still hold (orders that left their book for good: cancelled).
   * Idempotent by state: an order that holds nothing more is skipped, so the book's own releases of
   * the same orders, relayed later through the outbox, find nothing left to free.
   */
  z.object({
    type: z.literal('ReleaseOrders'),
    orderIds: z.array(orderId).min(1).max(5_000),
    reason: z.string().max(64),
    /** Handed on by a book with its cancel's answer (CancelOrders.releaseTo): the reply, once the holds are free. */
    answer: z.record(z.string(), z.unknown()).optional(),
  }),
  /**
   * A book short of credit for a BUY (actors/market-book/credit.ts): `returned` is the credit it had
   * left (given back first), `need` the order's amount. Granted (with a chunk more, as the unreserved
   * balance allows), the book's command goes back to `book` with `granted`; refused, the asker is
   * answered here (INSUFFICIENT_BALANCE with the markets whose books hold credit: `recall`).
   */
  z.object({
    type: z.literal('Grant'),
    market: z.string().min(1).max(128),
    need: amount,
    returned: amount,
    balance: balance.optional(),
    delegate: z.string().min(1).max(64).nullable(),
    book: handOn,
  }),
  /** Credit a book gives back (ReturnCredit); `answer`: the reply to give its asker. */
  z.object({
    type: z.literal('CreditBack'),
    market: z.string().min(1).max(128),
    amount,
    answer: z.record(z.string(), z.unknown()).optional(),
  }),
  /** Credit a book's BUY spent on a fill (the collateral leaves with the trade's settlement). */
  z.object({ type: z.literal('CreditSpent'), market: z.string().min(1).max(128), amount }),
  /** An on-chain balance read (or account change seen) at `slot`: the newest slot wins. */
  z.object({ type: z.literal('SeeBalance'), asset, balance }),
]);

export type WalletCommand = z.infer<typeof walletCommand>;

/**
 * Every wallet command answers this: ok, or the reservation did not fit the unreserved balance
 * (`INSUFFICIENT_BALANCE`), or the wallet has no balance of the asset on record and the command
 * brought none (`BALANCE_UNKNOWN`: the sender reads the chain and asks again). A Reserve that fits
 * says the standing allowance on record (`allowance`), when the balance seen carried one.
 */
export type WalletReply =
  | { ok: true; reserved?: string; available?: string; released?: string; allowance?: { delegate: string | null; amount: string } }
  | { ok: false; code: 'INSUFFICIENT_BALANCE' | 'BALANCE_UNKNOWN'; available: string; message: string; recall?: string[] };

/** The reply to each command type; a PlaceOrder that fits is answered by the book it goes on to. */
export type WalletReplies = {
  [T in Exclude<WalletCommand['type'], 'PlaceOrder' | 'ReleaseOrders' | 'Grant' | 'CreditBack'>]: WalletReply;
} & {
  PlaceOrder: WalletReply | PlaceReply;
  ReleaseOrders: WalletReply | CancelReply;
  Grant: WalletReply | PlaceReply;
  CreditBack: WalletReply | { ok: true; returned: string };
};

/** The topic as a typed channel: what senders write and what each command type answers. */
export interface WalletProtocol {
  cmd: z.input<typeof walletCommand>;
  replies: WalletReplies;
}

// The book's collateral credit: what a wallet granted this market's book for its BUYs. Collateral is
// shared by every market, so the wallet grants it in chunks (wallet Grant): a BUY the credit covers
// is held here and matched in one command, like a SELL's tokens (tokens.ts); one it does not cover
// is handed on to the wallet with the credit left, and comes back with more, or the wallet refuses
// it. What the credit holds is derived from the state: the remaining reservations of the owner's
// BUYs placed this way. A fill spends its part (the credit goes down with the order's hold, and the
// ledger tells the wallet: CreditSpent); a cancel or an expiry leaves it free here for the next BUY.
// Credit no order uses goes back to the wallet when a refusal for balance elsewhere recalls it.
import { reservedFor } from './amounts.ts';
import { ownerHashes } from './owners.ts';
import type { BookEvent, BookState, Decided, PlaceOrder, Rejection, ReturnCredit } from './types.ts';
import type { Decision } from '../../src/runtime/types.ts';

/** What the owner's BUYs placed on credit hold now (live and delayed). */
export function creditHeld(s: BookState, owner: string): bigint {
  let sum = 0n;
  for (const hash of ownerHashes(s, owner.toLowerCase())) {
    const o = s.orders.get(hash) ?? s.held.get(hash)?.order;
    if (o && o.inBook && o.side === 'BUY' && o.owner === owner) sum += reservedFor('BUY', o.price, o.remaining);
  }
  return sum;
}

/** Credit of the owner that no order holds. */
export function creditFree(s: BookState, owner: string): bigint {
  return (s.credit.get(owner)?.amount ?? 0n) - creditHeld(s, owner);
}

/**
 * A BUY with `holdCredit` that the credit left does not cover: handed on to the wallet with that
 * credit given back (Grant), to come back with `granted`. Null when it is covered (placed here).
 */
export function askForCredit(s: BookState, cmd: PlaceOrder): Decision<BookEvent, Rejection> | null {
  const h = cmd.holdCredit;
  const o = cmd.order;
  if (!h || cmd.granted || o.side !== 'BUY' || !s.market) return null;
  const need = reservedFor('BUY', o.price, o.size);
  const free = creditFree(s, o.maker);
  if (need <= free) return null;
  const back = free > 0n ? free : 0n;
  return {
    events: back > 0n ? [{ type: 'CreditReturned', at: cmd.now, owner: o.maker, amount: back }] : [],
    reply: { error: 'INSUFFICIENT_BALANCE', message: 'handed on to the wallet' },
    forward: {
      topic: h.walletTopic,
      key: o.maker,
      id: `grant:${o.hash}:${h.attempt}`,
      cmd: {
        type: 'Grant',
        market: s.key,
        need: need.toString(),
        returned: back.toString(),
        ...(h.balance ? { balance: h.balance } : {}),
        delegate: h.delegate,
        // the order comes back as it came, with `granted` added by the wallet
        book: { topic: h.bookTopic, key: s.key, id: `granted:${o.hash}:${h.attempt}`, cmd },
      },
    },
  };
}

export interface CreditHold {
  /** (none: the credit granted with the order is recorded by decidePlace, whatever the order's fate) */
  events: BookEvent[];
  refused: Rejection | null;
  short: boolean;
}

/** The BUY's collateral out of the credit (with what was granted with it). */
export function holdCredit(s: BookState, cmd: PlaceOrder, delegate: string | null): CreditHold {
  const o = cmd.order;
  const events: BookEvent[] = [];
  const g = cmd.granted;
  const need = reservedFor('BUY', o.price, o.size);
  const free = creditFree(s, o.maker) + (g?.amount ?? 0n);
  if (need > free)
    return {
      events,
      refused: { error: 'INSUFFICIENT_BALANCE', message: `maker amount ${need} exceeds the credit left ${free < 0n ? 0n : free}` },
      short: false,
    };
  const allowance = cmd.holdCredit?.allowance ?? g?.allowance ?? s.credit.get(o.maker)?.allowance;
  const short = !delegate || !allowance || allowance.delegate !== delegate || allowance.amount < need;
  return { events, refused: null, short };
}

/** Gives back what no order uses, through the wallet (which answers). */
export function decideReturnCredit(s: BookState, cmd: ReturnCredit): Decision<BookEvent, { ok: true; returned: string }> {
  const free = creditFree(s, cmd.owner);
  if (free <= 0n) return { events: [], reply: { ok: true, returned: '0' } };
  const had = s.credit.get(cmd.owner)?.amount ?? 0n;
  return {
    events: [{ type: 'CreditReturned', at: cmd.now, owner: cmd.owner, amount: free }],
    reply: { ok: true, returned: free.toString() },
    forward: {
      topic: cmd.walletTopic,
      key: cmd.owner,
      // one per return: the credit before it and the time name it
      id: `credit-back:${s.key}:${cmd.owner}:${had}:${cmd.now}`,
      cmd: { type: 'CreditBack', market: s.key, amount: free.toString(), answer: { ok: true, returned: free.toString() } },
    },
  };
}

/** evolve's part: credit granted or given back, and what a BUY's fill spent of it. */
export function evolveCredit(s: BookState, e: Extract<BookEvent, { type: 'CreditGranted' | 'CreditReturned' }>): void {
  const c = s.credit.get(e.owner) ?? { amount: 0n };
  if (e.type === 'CreditGranted') {
    c.amount += e.amount;
    if (e.allowance) c.allowance = e.allowance;
  } else c.amount -= e.amount;
  if (c.amount > 0n || c.allowance) s.credit.set(e.owner, c);
  else s.credit.delete(e.owner);
}

/** A fill of a BUY on credit spent `amount` of it. */
export function spendCredit(s: BookState, owner: string, amount: bigint): void {
  const c = s.credit.get(owner);
  if (c) c.amount -= amount;
}

export type { Decided };

// The book's own holds: a wallet's outcome tokens. A token belongs to one market, so what a SELL
// holds is kept by its book, not by the wallet: a SELL and its cancel are then one command on one
// key (no wallet hop, no release record). The balance per (owner, token) is as last seen (an order
// brings the first read, SeeBalance the account's changes, newest slot wins); what is held is
// derived from the state itself — the remaining size of the owner's resting and delayed SELL orders
// placed this way, plus the conversions' unlapsed reserves — so no event has to keep a sum right.
import { ownerCount, ownerHashes } from './owners.ts';
import type {
  BalanceInput,
  BookEvent,
  BookState,
  Decided,
  Rejection,
  ReleaseTokens,
  ReserveTokens,
  SeeBalance,
  TokenBalance,
  TokensReply,
} from './types.ts';

const reject = (error: Rejection['error'], message: string): Rejection => ({ error, message });

/** What the owner's tokens of `asset` hold on this book at `now`. */
export function tokensHeld(s: BookState, owner: string, asset: string, now: number): bigint {
  let sum = 0n;
  for (const hash of ownerHashes(s, owner.toLowerCase())) {
    const o = s.orders.get(hash) ?? s.held.get(hash)?.order;
    if (o && o.inBook && o.side === 'SELL' && o.tokenId === asset && o.owner === owner) sum += o.remaining;
  }
  if (s.reserves.size > 0)
    for (const r of s.reserves.values())
      if (r.owner === owner && r.lapsesAt > now) for (const h of r.holds) if (h.asset === asset) sum += h.amount;
  return sum;
}

const seenEvent = (at: number, owner: string, asset: string, b: BalanceInput): BookEvent => ({
  type: 'BalanceSeen',
  at,
  owner,
  asset,
  amount: b.amount,
  slot: b.slot,
  ...(b.delegate !== undefined ? { delegate: b.delegate } : {}),
  ...(b.delegatedAmount !== undefined ? { delegatedAmount: b.delegatedAmount } : {}),
});

/** The balance to hold against: the one on record, or the one brought when it is newer (with its event). */
function known(s: BookState, owner: string, asset: string, brought: BalanceInput | undefined, now: number, events: BookEvent[]) {
  const cur = s.balances.get(owner)?.get(asset);
  if (brought && (!cur || brought.slot >= cur.slot)) {
    events.push(seenEvent(now, owner, asset, brought));
    return brought as TokenBalance;
  }
  return cur;
}

export interface TokenHold {
  /** BalanceSeen of what was brought (they stand whatever the order's fate). */
  events: BookEvent[];
  refused: Rejection | null;
  /** The standing allowance does not cover the amount for `delegate`: the order's `allowance` warning. */
  short: boolean;
}

/** Does `amount` of `asset` fit what the owner has on record, less what its orders and conversions hold? */
export function holdTokens(
  s: BookState,
  owner: string,
  asset: string,
  amount: bigint,
  how: { balance?: BalanceInput; delegate: string | null },
  now: number,
): TokenHold {
  const events: BookEvent[] = [];
  const b = known(s, owner, asset, how.balance, now, events);
  if (!b) return { events, refused: reject('BALANCE_UNKNOWN', `no balance of ${asset} on record for this wallet`), short: false };
  const free = b.amount - tokensHeld(s, owner, asset, now);
  if (amount > free) {
    const left = free < 0n ? 0n : free;
    return {
      events,
      refused: reject('INSUFFICIENT_BALANCE', `maker amount ${amount} exceeds the unreserved balance ${left}`),
      short: false,
    };
  }
  const short = !how.delegate || b.delegatedAmount === undefined || b.delegate !== how.delegate || b.delegatedAmount < amount;
  return { events, refused: null, short };
}

export function decideSeeBalance(s: BookState, cmd: SeeBalance): Decided<{ ok: true }> {
  const events: BookEvent[] = [];
  known(s, cmd.owner, cmd.asset, cmd.balance, cmd.now, events);
  return { events, reply: { ok: true } };
}

/** All or nothing; a reserve made before (same id) answers as it did. */
export function decideReserveTokens(s: BookState, cmd: ReserveTokens): Decided<TokensReply> {
  if (s.reserves.has(cmd.id)) return { events: [], reply: { ok: true } };
  const events: BookEvent[] = [];
  for (const h of cmd.holds) {
    const b = known(s, cmd.owner, h.asset, h.balance, cmd.now, events);
    const free = (b?.amount ?? 0n) - tokensHeld(s, cmd.owner, h.asset, cmd.now);
    if (!b || h.amount > free) {
      const left = free < 0n ? 0n : free;
      return {
        events,
        reply: b
          ? {
              ok: false,
              code: 'INSUFFICIENT_BALANCE',
              asset: h.asset,
              available: left.toString(),
              message: `amount ${h.amount} exceeds the unreserved balance ${left} of ${h.asset}`,
            }
          : {
              ok: false,
              code: 'BALANCE_UNKNOWN',
              asset: h.asset,
              available: '0',
              message: `no balance of ${h.asset} on record for this wallet`,
            },
      };
    }
  }
  events.push({
    type: 'TokensReserved',
    at: cmd.now,
    id: cmd.id,
    owner: cmd.owner,
    holds: cmd.holds.map((h) => ({ asset: h.asset, amount: h.amount })),
    lapsesAt: cmd.now + cmd.holdMs,
  });
  return { events, reply: { ok: true } };
}

export function decideReleaseTokens(s: BookState, cmd: ReleaseTokens): Decided<TokensReply> {
  if (!s.reserves.has(cmd.id)) return { events: [], reply: { ok: true, released: false } };
  return { events: [{ type: 'TokensReleased', at: cmd.now, id: cmd.id }], reply: { ok: true, released: true } };
}

/**
 * Most owners whose token balances a book keeps (its snapshot holds them all). Past it, the owner
 * seen longest ago that holds nothing here (no order, no reserve) is forgotten: its next SELL
 * answers BALANCE_UNKNOWN and the front door reads the chain once for it.
 */
export const BALANCES_MAX = 10_000;

function forgetIdle(s: BookState): void {
  let looked = 0;
  for (const owner of s.balances.keys()) {
    if (++looked > 64) return; // all busy near the front: the map grows a little instead
    if (ownerCount(s, owner.toLowerCase()) > 0) continue;
    let reserving = false;
    for (const r of s.reserves.values()) if (r.owner === owner) reserving = true;
    if (reserving) continue;
    s.balances.delete(owner);
    return;
  }
}

/** evolve's part: the token events, in place. */
export function evolveTokens(s: BookState, e: Extract<BookEvent, { type: 'BalanceSeen' | 'TokensReserved' | 'TokensReleased' }>): void {
  switch (e.type) {
    case 'BalanceSeen': {
      // Most recently seen last: the owners seen longest ago go first when the book keeps too many.
      let m = s.balances.get(e.owner);
      if (m) s.balances.delete(e.owner);
      else m = new Map();
      s.balances.set(e.owner, m);
      if (s.balances.size > BALANCES_MAX) forgetIdle(s);
      const b: TokenBalance = { amount: e.amount, slot: e.slot };
      if (e.delegate !== undefined) b.delegate = e.delegate;
      if (e.delegatedAmount !== undefined) b.delegatedAmount = e.delegatedAmount;
      m.set(e.asset, b);
      return;
    }
    case 'TokensReserved':
      // the lapsed ones go as a new one comes (time from the event: replay gives the same state)
      for (const [id, r] of s.reserves) if (r.lapsesAt <= e.at) s.reserves.delete(id);
      s.reserves.set(e.id, { owner: e.owner, holds: e.holds, lapsesAt: e.lapsesAt });
      return;
    case 'TokensReleased':
      s.reserves.delete(e.id);
      return;
  }
}

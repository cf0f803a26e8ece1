// The Wallet actor (key = wallet address): holds of balance for resting orders, across markets. An
// order's maker amount is held against the on-chain balance (as last seen, newest slot wins) minus
// what the wallet's other orders hold. PlaceOrder is the risk stage of the one-pass order path
// (src/clob/pipeline.md): the hold is for good and the book's command is handed on in the same
// commit. A two-step Reserve (mint/merge settlement's) lapses after `holdMs` unless confirmed, so a
// node that dies between its two steps leaks nothing.
// The balance per asset (and the standing allowance, when seen) is kept here: seeded by one chain
// read the first time a node sees the wallet, then kept current by account-change notifications
// (SeeBalance), so an order needs no chain read. A hold with no balance on record and none in the
// command answers BALANCE_UNKNOWN, and the front door reads the chain once and asks again.
import type { Decider, Decision } from '../../src/runtime/types.ts';
import type { CancelReply } from '../../topics/clob-commands.ts';
import type { WalletCommand, WalletReply } from '../../topics/wallet-commands.ts';

export interface Reservation {
  asset: string;
  amount: string;
  market: string;
  confirmed: boolean;
  lapsesAt: number;
}

/** A token account as last seen: amount, slot, and the standing allowance when the read carried it. */
export interface Balance {
  amount: string;
  slot: number;
  delegate?: string | null;
  delegatedAmount?: string;
}

export interface WalletState {
  balances: Record<string, Balance>;
  reservations: Record<string, Reservation>;
  /** Collateral granted to markets' books for their BUYs (Grant), by market, not given back or spent
   *  yet (absent in snapshots from before). */
  credit?: Record<string, string>;
}

export type WalletEvent =
  | { type: 'Reserved'; orderId: string; reservation: Reservation }
  | { type: 'Confirmed'; orderId: string }
  | { type: 'Released'; orderId: string; amount: string; reason: string }
  | ({ type: 'BalanceSeen'; asset: string } & Balance)
  | { type: 'Granted'; market: string; amount: string }
  /** given back by the book (`returned`), or spent by a fill there (`spent`) */
  | { type: 'CreditReturned'; market: string; amount: string; reason: 'returned' | 'spent' };

type Cmd = WalletCommand & { at: number };

/**
 * What a wallet's holds add up to, kept with its state as events apply (not in its snapshot: built
 * from the reservations the first time a state is used): an order's check and its hold cost the
 * same with 5 holds or 5,000, which a market maker's wallet has.
 */
interface HoldIndex {
  /** Per asset, the sum of the holds for good (confirmed: an order's). */
  confirmed: Map<string, bigint>;
  /** The holds that lapse unless confirmed (a two-step Reserve's), by order id, in the order they were made. */
  lapsing: Map<string, Reservation>;
  /** The collateral granted to books, all markets. */
  credit: bigint;
}

const indexes = new WeakMap<WalletState, HoldIndex>();

function indexOf(state: WalletState): HoldIndex {
  let ix = indexes.get(state);
  if (!ix) {
    ix = { confirmed: new Map(), lapsing: new Map(), credit: 0n };
    for (const [orderId, r] of Object.entries(state.reservations)) count(ix, orderId, r, 1n);
    for (const v of Object.values(state.credit ?? {})) ix.credit += BigInt(v);
    indexes.set(state, ix);
  }
  return ix;
}

/** Adds (sign 1) or takes out (sign -1) one reservation's part of the index. */
function count(ix: HoldIndex, orderId: string, r: Reservation, sign: 1n | -1n): void {
  if (!r.confirmed) {
    if (sign > 0n) ix.lapsing.set(orderId, r);
    else ix.lapsing.delete(orderId);
    return;
  }
  const sum = (ix.confirmed.get(r.asset) ?? 0n) + sign * BigInt(r.amount);
  if (sum === 0n) ix.confirmed.delete(r.asset);
  else ix.confirmed.set(r.asset, sum);
}

export function held(state: WalletState, asset: string, now: number): bigint {
  const ix = indexOf(state);
  let sum = (ix.confirmed.get(asset) ?? 0n) + (asset === 'collateral' ? ix.credit : 0n);
  for (const r of ix.lapsing.values()) if (r.asset === asset && r.lapsesAt > now) sum += BigInt(r.amount);
  return sum;
}

export function available(state: WalletState, asset: string, now: number): bigint {
  return BigInt(state.balances[asset]?.amount ?? '0') - held(state, asset, now);
}

/** The standing allowance on record, as a Reserve reply says it (nothing when the balance seen carried none). */
function allowanceOf(b: Balance | undefined): { allowance?: { delegate: string | null; amount: string } } {
  return b?.delegatedAmount !== undefined ? { allowance: { delegate: b.delegate ?? null, amount: b.delegatedAmount } } : {};
}

type Holding = Extract<Cmd, { type: 'Reserve' | 'PlaceOrder' }>;

/** What a grant adds beyond the order's need, as much as is free: the larger of CHUNK times the
 *  need and a SHARE-th of what is free, so that the next orders in the market go on without asking
 *  (a wallet trading in a few markets asks each book about once), while what sits idle in one book
 *  stays small next to the rest (and is recalled before any refusal). */
const CHUNK = 3n;
const SHARE = 16n;

/** The markets whose books hold credit of this wallet (a refusal names them: the sender recalls it). */
function creditMarkets(state: WalletState, but: string | null, events: WalletEvent[]): string[] {
  const left = new Map(Object.entries(state.credit ?? {}).map(([m, v]) => [m, BigInt(v)]));
  for (const e of events) if (e.type === 'CreditReturned') left.set(e.market, (left.get(e.market) ?? 0n) - BigInt(e.amount));
  return [...left].filter(([m, v]) => v > 0n && m !== but).map(([m]) => m);
}

/** A book asks for credit for a BUY: what it had left comes back first, then the need (and a chunk) is granted. */
function grant(state: WalletState, events: WalletEvent[], cmd: Extract<Cmd, { type: 'Grant' }>): Decision<WalletEvent, WalletReply> {
  const had = BigInt(state.credit?.[cmd.market] ?? '0');
  const back = BigInt(cmd.returned) < had ? BigInt(cmd.returned) : had;
  if (back > 0n) events.push({ type: 'CreditReturned', market: cmd.market, amount: back.toString(), reason: 'returned' });
  const cur = state.balances.collateral;
  let known: Balance | undefined = cur;
  if (cmd.balance && (!cur || cmd.balance.slot >= cur.slot)) {
    events.push({ type: 'BalanceSeen', asset: 'collateral', ...cmd.balance });
    known = { ...cmd.balance };
  }
  if (!known)
    return {
      events,
      reply: { ok: false, code: 'BALANCE_UNKNOWN', available: '0', message: 'no balance of collateral on record for this wallet' },
    };
  const need = BigInt(cmd.need);
  const free = BigInt(known.amount) - held(state, 'collateral', cmd.at) + back;
  if (need > free) {
    const left = free < 0n ? 0n : free;
    const recall = creditMarkets(state, cmd.market, events);
    return {
      events,
      reply: {
        ok: false,
        code: 'INSUFFICIENT_BALANCE',
        available: left.toString(),
        message: `maker amount ${need} exceeds the unreserved balance ${left}`,
        ...(recall.length ? { recall } : {}),
      },
    };
  }
  const want = CHUNK * need > free / SHARE ? CHUNK * need : free / SHARE;
  const extra = free - need < want ? free - need : want;
  const amount = need + extra;
  events.push({ type: 'Granted', market: cmd.market, amount: amount.toString() });
  const allowance = allowanceOf(known).allowance;
  return {
    events,
    reply: { ok: true, reserved: amount.toString() },
    forward: { ...cmd.book, cmd: { ...cmd.book.cmd, granted: { amount: amount.toString(), ...(allowance ? { allowance } : {}) } } },
  };
}

/**
 * Holds the command's amount against the balance on record (the one it brings, if newer); an order
 * held before answers as it did. `live` is the reservation of an order unless it lapses with this command.
 */
function hold(
  state: WalletState,
  events: WalletEvent[],
  cmd: Holding,
  how: { confirmed: boolean; lapsesAt: number },
  live: (orderId: string) => Reservation | undefined,
): Decision<WalletEvent, WalletReply> {
  const before = live(cmd.orderId);
  if (before) return { events, reply: { ok: true, reserved: before.amount, ...allowanceOf(state.balances[cmd.asset]) } };
  const cur = state.balances[cmd.asset];
  let known: Balance | undefined = cur;
  if (cmd.balance && (!cur || cmd.balance.slot >= cur.slot)) {
    events.push({ type: 'BalanceSeen', asset: cmd.asset, ...cmd.balance });
    known = { ...cmd.balance };
  }
  if (!known) {
    return {
      events,
      reply: { ok: false, code: 'BALANCE_UNKNOWN', available: '0', message: `no balance of ${cmd.asset} on record for this wallet` },
    };
  }
  const free = BigInt(known.amount) - held(state, cmd.asset, cmd.at);
  if (BigInt(cmd.amount) > free) {
    const recall = cmd.asset === 'collateral' ? creditMarkets(state, null, events) : [];
    return {
      events,
      reply: {
        ok: false,
        code: 'INSUFFICIENT_BALANCE',
        available: (free < 0n ? 0n : free).toString(),
        message: `maker amount ${cmd.amount} exceeds the unreserved balance ${free < 0n ? 0n : free}`,
        ...(recall.length ? { recall } : {}),
      },
    };
  }
  events.push({
    type: 'Reserved',
    orderId: cmd.orderId,
    reservation: { asset: cmd.asset, amount: cmd.amount, market: cmd.market, ...how },
  });
  return { events, reply: { ok: true, reserved: cmd.amount, available: (free - BigInt(cmd.amount)).toString(), ...allowanceOf(known) } };
}

export const walletDecider: Decider<WalletState, Cmd, WalletEvent, WalletReply | CancelReply> = {
  initial: () => ({ balances: {}, reservations: {} }),

  decide(state, cmd) {
    const events: WalletEvent[] = [];
    // Holds that lapsed are dropped first (time comes in the command), but a late Confirm keeps its own.
    const confirming = cmd.type === 'Confirm' ? cmd.orderId : null;
    let lapsed: Set<string> | null = null;
    for (const [orderId, r] of indexOf(state).lapsing) {
      if (r.lapsesAt <= cmd.at && orderId !== confirming) {
        events.push({ type: 'Released', orderId, amount: r.amount, reason: 'hold_lapsed' });
        (lapsed ??= new Set()).add(orderId);
      }
    }
    // decide never writes the state: what lapses with this command is left out here, and by evolve.
    const live = (orderId: string) => (lapsed?.has(orderId) ? undefined : state.reservations[orderId]);
    switch (cmd.type) {
      case 'SeeBalance': {
        const cur = state.balances[cmd.asset];
        if (!cur || cmd.balance.slot >= cur.slot) events.push({ type: 'BalanceSeen', asset: cmd.asset, ...cmd.balance });
        return { events, reply: { ok: true } };
      }
      case 'Reserve':
        return hold(state, events, cmd, { confirmed: false, lapsesAt: cmd.at + cmd.holdMs }, live);
      case 'PlaceOrder': {
        const held = hold(state, events, cmd, { confirmed: true, lapsesAt: 0 }, live);
        if (!held.reply.ok) return held;
        // Held (now, or by an earlier try of the same order): the book's command goes on, with the
        // allowance warning the book's answer carries.
        const allowance = held.reply.allowance;
        const short = !cmd.delegate || !allowance || allowance.delegate !== cmd.delegate || BigInt(allowance.amount) < BigInt(cmd.amount);
        return {
          ...held,
          forward: { ...cmd.book, cmd: { ...cmd.book.cmd, held: true, ...(short ? { warnings: ['allowance'] } : {}) } },
        };
      }
      case 'Confirm': {
        const r = live(cmd.orderId);
        if (r && !r.confirmed) events.push({ type: 'Confirmed', orderId: cmd.orderId });
        return { events, reply: { ok: true } };
      }
      case 'Release': {
        const r = live(cmd.orderId);
        if (!r) return { events, reply: { ok: true, released: '0' } };
        const amount = cmd.amount === undefined || BigInt(cmd.amount) >= BigInt(r.amount) ? r.amount : cmd.amount;
        events.push({ type: 'Released', orderId: cmd.orderId, amount, reason: cmd.reason });
        return { events, reply: { ok: true, released: amount } };
      }
      case 'Grant':
        return grant(state, events, cmd);
      case 'CreditBack':
      case 'CreditSpent': {
        const had = BigInt(state.credit?.[cmd.market] ?? '0');
        const amount = BigInt(cmd.amount) < had ? BigInt(cmd.amount) : had;
        if (amount > 0n)
          events.push({
            type: 'CreditReturned',
            market: cmd.market,
            amount: amount.toString(),
            reason: cmd.type === 'CreditBack' ? 'returned' : 'spent',
          });
        if (cmd.type === 'CreditBack' && cmd.answer) return { events, reply: cmd.answer as unknown as WalletReply };
        return { events, reply: { ok: true, released: amount.toString() } };
      }
      case 'ReleaseOrders': {
        let sum = 0n;
        for (const orderId of new Set(cmd.orderIds)) {
          const r = live(orderId);
          if (!r) continue;
          events.push({ type: 'Released', orderId, amount: r.amount, reason: cmd.reason });
          sum += BigInt(r.amount);
        }
        // Handed on by a book with its cancel's answer: that answer goes to the asker, now that the holds are free.
        if (cmd.answer) return { events, reply: cmd.answer as unknown as CancelReply };
        return { events, reply: { ok: true, released: sum.toString() } };
      }
    }
  },

  // Applies one event to the state IN PLACE and returns the same object (as the market book does):
  // the runtime keeps no earlier version of an actor's state, and copying a wallet's every hold per
  // event made each order cost as much as the wallet had orders.
  evolve(state, e) {
    const ix = indexOf(state);
    switch (e.type) {
      case 'BalanceSeen': {
        const { type: _type, asset, ...balance } = e;
        state.balances[asset] = balance;
        return state;
      }
      case 'Granted':
      case 'CreditReturned': {
        const credit = (state.credit ??= {});
        const sign = e.type === 'Granted' ? 1n : -1n;
        const now = BigInt(credit[e.market] ?? '0') + sign * BigInt(e.amount);
        if (now > 0n) credit[e.market] = now.toString();
        else delete credit[e.market];
        ix.credit += sign * BigInt(e.amount);
        return state;
      }
      case 'Reserved': {
        const was = state.reservations[e.orderId];
        if (was) count(ix, e.orderId, was, -1n);
        state.reservations[e.orderId] = e.reservation;
        count(ix, e.orderId, e.reservation, 1n);
        return state;
      }
      case 'Confirmed': {
        const r = state.reservations[e.orderId];
        if (!r) return state;
        count(ix, e.orderId, r, -1n);
        const now = { ...r, confirmed: true };
        state.reservations[e.orderId] = now;
        count(ix, e.orderId, now, 1n);
        return state;
      }
      case 'Released': {
        const r = state.reservations[e.orderId];
        if (!r) return state;
        const left = BigInt(r.amount) - BigInt(e.amount);
        if (left > 0n) {
          const kept = { ...r, amount: left.toString() };
          state.reservations[e.orderId] = kept;
          // (a lapsing hold keeps its place among the others: the order its lapses are decided in)
          if (r.confirmed) {
            count(ix, e.orderId, r, -1n);
            count(ix, e.orderId, kept, 1n);
          } else ix.lapsing.set(e.orderId, kept);
        } else {
          count(ix, e.orderId, r, -1n);
          delete state.reservations[e.orderId];
        }
        return state;
      }
    }
  },
};

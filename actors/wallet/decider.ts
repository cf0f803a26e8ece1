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
}

export type WalletEvent =
  | { type: 'Reserved'; orderId: string; reservation: Reservation }
  | { type: 'Confirmed'; orderId: string }
  | { type: 'Released'; orderId: string; amount: string; reason: string }
  | ({ type: 'BalanceSeen'; asset: string } & Balance);

type Cmd = WalletCommand & { at: number };

export function held(state: WalletState, asset: string, now: number): bigint {
  let sum = 0n;
  for (const r of Object.values(state.reservations)) if (r.asset === asset && (r.confirmed || r.lapsesAt > now)) sum += BigInt(r.amount);
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

/** Holds the command's amount against the balance on record (the one it brings, if newer); an order held before answers as it did. */
function hold(
  state: WalletState,
  events: WalletEvent[],
  cmd: Holding,
  how: { confirmed: boolean; lapsesAt: number },
): Decision<WalletEvent, WalletReply> {
  let s = state;
  if (s.reservations[cmd.orderId])
    return { events, reply: { ok: true, reserved: s.reservations[cmd.orderId].amount, ...allowanceOf(s.balances[cmd.asset]) } };
  const cur = s.balances[cmd.asset];
  if (cmd.balance && (!cur || cmd.balance.slot >= cur.slot)) {
    events.push({ type: 'BalanceSeen', asset: cmd.asset, ...cmd.balance });
    s = walletDecider.evolve(s, events[events.length - 1]);
  }
  const known = s.balances[cmd.asset];
  if (!known) {
    return {
      events,
      reply: { ok: false, code: 'BALANCE_UNKNOWN', available: '0', message: `no balance of ${cmd.asset} on record for this wallet` },
    };
  }
  const free = available(s, cmd.asset, cmd.at);
  if (BigInt(cmd.amount) > free) {
    return {
      events,
      reply: {
        ok: false,
        code: 'INSUFFICIENT_BALANCE',
        available: (free < 0n ? 0n : free).toString(),
        message: `maker amount ${cmd.amount} exceeds the unreserved balance ${free < 0n ? 0n : free}`,
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

export const walletDecider: Decider<WalletState, Cmd, WalletEvent, WalletReply> = {
  initial: () => ({ balances: {}, reservations: {} }),

  decide(state, cmd) {
    const events: WalletEvent[] = [];
    // Holds that lapsed are dropped first (time comes in the command), but a late Confirm keeps its own.
    const confirming = cmd.type === 'Confirm' ? cmd.orderId : null;
    for (const [orderId, r] of Object.entries(state.reservations)) {
      if (!r.confirmed && r.lapsesAt <= cmd.at && orderId !== confirming) {
        events.push({ type: 'Released', orderId, amount: r.amount, reason: 'hold_lapsed' });
      }
    }
    let s = state;
    for (const e of events) s = walletDecider.evolve(s, e);
    switch (cmd.type) {
      case 'SeeBalance': {
        const cur = s.balances[cmd.asset];
        if (!cur || cmd.balance.slot >= cur.slot) events.push({ type: 'BalanceSeen', asset: cmd.asset, ...cmd.balance });
        return { events, reply: { ok: true } };
      }
      case 'Reserve':
        return hold(s, events, cmd, { confirmed: false, lapsesAt: cmd.at + cmd.holdMs });
      case 'PlaceOrder': {
        const held = hold(s, events, cmd, { confirmed: true, lapsesAt: 0 });
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
        const r = s.reservations[cmd.orderId];
        if (r && !r.confirmed) events.push({ type: 'Confirmed', orderId: cmd.orderId });
        return { events, reply: { ok: true } };
      }
      case 'Release': {
        const r = s.reservations[cmd.orderId];
        if (!r) return { events, reply: { ok: true, released: '0' } };
        const amount = cmd.amount === undefined || BigInt(cmd.amount) >= BigInt(r.amount) ? r.amount : cmd.amount;
        events.push({ type: 'Released', orderId: cmd.orderId, amount, reason: cmd.reason });
        return { events, reply: { ok: true, released: amount } };
      }
      case 'ReleaseOrders': {
        let sum = 0n;
        for (const orderId of new Set(cmd.orderIds)) {
          const r = s.reservations[orderId];
          if (!r) continue;
          events.push({ type: 'Released', orderId, amount: r.amount, reason: cmd.reason });
          sum += BigInt(r.amount);
        }
        return { events, reply: { ok: true, released: sum.toString() } };
      }
    }
  },

  evolve(state, e) {
    switch (e.type) {
      case 'BalanceSeen': {
        const { type: _type, asset, ...balance } = e;
        return { ...state, balances: { ...state.balances, [asset]: balance } };
      }
      case 'Reserved':
        return { ...state, reservations: { ...state.reservations, [e.orderId]: e.reservation } };
      case 'Confirmed': {
        const r = state.reservations[e.orderId];
        return r ? { ...state, reservations: { ...state.reservations, [e.orderId]: { ...r, confirmed: true } } } : state;
      }
      case 'Released': {
        const r = state.reservations[e.orderId];
        if (!r) return state;
        const left = BigInt(r.amount) - BigInt(e.amount);
        const reservations = { ...state.reservations };
        if (left > 0n) reservations[e.orderId] = { ...r, amount: left.toString() };
        else delete reservations[e.orderId];
        return { ...state, reservations };
      }
    }
  },
};

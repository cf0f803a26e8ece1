// The Wallet actor (key = wallet address): reservations of balance for resting orders, across
// markets. An order's maker amount is held against the on-chain balance (as last seen, newest slot
// wins) minus what the wallet's other orders hold. A hold taken before the order reached its book
// lapses after `holdMs` unless confirmed, so a node that dies between the two steps leaks nothing.
import type { Decider } from '../../src/runtime/types.ts';
import type { WalletCommand, WalletReply } from '../../topics/wallet-commands.ts';

export interface Reservation {
  asset: string;
  amount: string;
  market: string;
  confirmed: boolean;
  lapsesAt: number;
}

export interface WalletState {
  balances: Record<string, { amount: string; slot: number }>;
  reservations: Record<string, Reservation>;
}

export type WalletEvent =
  | { type: 'Reserved'; orderId: string; reservation: Reservation }
  | { type: 'Confirmed'; orderId: string }
  | { type: 'Released'; orderId: string; amount: string; reason: string }
  | { type: 'BalanceSeen'; asset: string; amount: string; slot: number };

type Cmd = WalletCommand & { at: number };

export function held(state: WalletState, asset: string, now: number): bigint {
  let sum = 0n;
  for (const r of Object.values(state.reservations)) if (r.asset === asset && (r.confirmed || r.lapsesAt > now)) sum += BigInt(r.amount);
  return sum;
}

export function available(state: WalletState, asset: string, now: number): bigint {
  return BigInt(state.balances[asset]?.amount ?? '0') - held(state, asset, now);
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
      case 'Reserve': {
        if (s.reservations[cmd.orderId]) return { events, reply: { ok: true, reserved: s.reservations[cmd.orderId].amount } };
        const cur = s.balances[cmd.asset];
        if (cmd.balance && (!cur || cmd.balance.slot >= cur.slot)) {
          events.push({ type: 'BalanceSeen', asset: cmd.asset, ...cmd.balance });
          s = walletDecider.evolve(s, events[events.length - 1]);
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
          reservation: { asset: cmd.asset, amount: cmd.amount, market: cmd.market, confirmed: false, lapsesAt: cmd.at + cmd.holdMs },
        });
        return { events, reply: { ok: true, reserved: cmd.amount, available: (free - BigInt(cmd.amount)).toString() } };
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
    }
  },

  evolve(state, e) {
    switch (e.type) {
      case 'BalanceSeen':
        return { ...state, balances: { ...state.balances, [e.asset]: { amount: e.amount, slot: e.slot } } };
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

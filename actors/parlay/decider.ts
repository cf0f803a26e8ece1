// The Parlay actor: one per on-chain parlay id. Applies the program's events once, in a way that a
// late delivery never rolls the aggregates back; an event about a parlay not created yet is
// deferred (not applied, not remembered) so that the provider's retry applies it later.
import type { Decider } from '../../src/runtime/types.ts';
import { posAfter, type ParlayCommand, type Pos, type ParlayReply } from '../../topics/parlay-events.ts';

export type ParlayStatus = 'active' | 'won' | 'lost' | 'claimed' | 'voided' | 'refunded';
export type LegStatus = 'pending' | 'won' | 'lost' | 'voided';

export const STATUS_CODES: ParlayStatus[] = ['active', 'won', 'lost', 'claimed', 'voided', 'refunded'];
export const LEG_STATUS_CODES: LegStatus[] = ['pending', 'won', 'lost', 'voided'];

export interface ParlayState {
  exists: boolean;
  status: ParlayStatus;
  /** Positions of the latest events whose status, leg counters and payout are shown: each moves
   *  on its own, since not every event carries all three. */
  statusPos: Pos | null;
  countersPos: Pos | null;
  payoutPos: Pos | null;
  legs: LegStatus[];
  claimed: boolean;
  voided: boolean;
}

interface Apply {
  applyStatus: boolean;
  applyPayout: boolean;
}

export type ParlayEvent =
  | Extract<ParlayCommand, { type: 'ParlayCreated' }>
  | (Extract<ParlayCommand, { type: 'LegSettled' }> & Apply & { applyCounters: boolean })
  | (Extract<ParlayCommand, { type: 'ParlayClaimed' }> & Apply)
  | (Extract<ParlayCommand, { type: 'ParlayVoided' }> & Apply);

const reply = (result: ParlayReply['result'], reason?: string): ParlayReply => (reason ? { result, reason } : { result });

export const parlayDecider: Decider<ParlayState, ParlayCommand, ParlayEvent, ParlayReply> = {
  initial: () => ({
    exists: false,
    status: 'active',
    statusPos: null,
    countersPos: null,
    payoutPos: null,
    legs: [],
    claimed: false,
    voided: false,
  }),

  decide(state, cmd) {
    if (cmd.type === 'ParlayCreated') {
      if (state.exists) return { events: [], reply: reply('duplicate') };
      const markets = new Set(cmd.legs.map((l) => l.marketId));
      if (markets.size !== cmd.legs.length) return { events: [], reply: reply('rejected', 'the same market appears twice') };
      return { events: [cmd], reply: reply('applied') };
    }
    if (!state.exists) return { events: [], reply: reply('deferred'), final: false };
    switch (cmd.type) {
      case 'LegSettled': {
        if (cmd.legIndex >= state.legs.length) return { events: [], reply: reply('rejected', `no leg ${cmd.legIndex}`) };
        if (state.legs[cmd.legIndex] !== 'pending') return { events: [], reply: reply('duplicate') };
        return {
          events: [{ ...cmd, ...applies(state, cmd.pos), applyCounters: posAfter(cmd.pos, state.countersPos) }],
          reply: reply('applied'),
        };
      }
      case 'ParlayClaimed':
        if (state.claimed) return { events: [], reply: reply('duplicate') };
        return { events: [{ ...cmd, ...applies(state, cmd.pos) }], reply: reply('applied') };
      case 'ParlayVoided':
        if (state.voided) return { events: [], reply: reply('duplicate') };
        return { events: [{ ...cmd, ...applies(state, cmd.pos) }], reply: reply('applied') };
    }
  },

  evolve(state, e) {
    switch (e.type) {
      case 'ParlayCreated':
        return {
          exists: true,
          status: 'active',
          statusPos: e.pos,
          countersPos: e.pos,
          payoutPos: e.pos,
          legs: e.legs.map(() => 'pending'),
          claimed: false,
          voided: false,
        };
      case 'LegSettled': {
        const legs = state.legs.slice();
        legs[e.legIndex] = LEG_STATUS_CODES[e.legStatus] ?? 'pending';
        return moved({ ...state, legs }, e, STATUS_CODES[e.parlayStatus] ?? state.status, e.applyCounters);
      }
      case 'ParlayClaimed':
        return moved({ ...state, claimed: true }, e, 'claimed', false);
      case 'ParlayVoided':
        return moved({ ...state, voided: true }, e, 'refunded', false);
    }
  },
};

function applies(state: ParlayState, pos: Pos): Apply {
  return { applyStatus: posAfter(pos, state.statusPos), applyPayout: posAfter(pos, state.payoutPos) };
}

function moved(state: ParlayState, e: Apply & { pos: Pos }, status: ParlayStatus, counters: boolean): ParlayState {
  const next = { ...state };
  if (e.applyStatus) {
    next.status = status;
    next.statusPos = e.pos;
  }
  if (e.applyPayout) next.payoutPos = e.pos;
  if (counters) next.countersPos = e.pos;
  return next;
}

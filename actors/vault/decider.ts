// The Vault actor (key `vault`): the mirror of the vault token account, the program's totals and
// its configuration. Every value carries the position of the observation that set it and is only
// overwritten from a later one, so late or repeated deliveries never roll the mirror back.
import type { Decider } from '../../src/runtime/types.ts';
import { posAfter, type ConfigFields, type Pos, type VaultCommand, type VaultReply, type VaultValues } from '../../topics/parlay-events.ts';

export interface Field<T> {
  v: T;
  pos: Pos | null;
}

export interface VaultState {
  balance: Field<string>;
  totalStaked: Field<string>;
  totalPaidOut: Field<string>;
  totalExposure: Field<string>;
  vaultAddress: Field<string>;
  maxPayoutCap: Field<string>;
  maxLegs: Field<number>;
  minStake: Field<string>;
  maxStake: Field<string>;
  isActive: Field<boolean>;
  config: (ConfigFields & { pos: Pos }) | null;
  /** The latest position seen: admin edits take it, so the next chain event still wins. */
  latest: Pos | null;
  updatedAt: number;
}

type FieldName =
  | 'balance'
  | 'totalStaked'
  | 'totalPaidOut'
  | 'totalExposure'
  | 'vaultAddress'
  | 'maxPayoutCap'
  | 'maxLegs'
  | 'minStake'
  | 'maxStake'
  | 'isActive';

export type VaultEvent =
  | { type: 'ValuesSet'; at: number; values: Partial<{ [K in FieldName]: VaultState[K] }> }
  | { type: 'ConfigSet'; pos: Pos; at: number; config: ConfigFields };

type Values = Extract<VaultEvent, { type: 'ValuesSet' }>['values'];
type WithAt<C> = C & { at: number };

const field = <T>(v: T): Field<T> => ({ v, pos: null });
const MAX_POS = 2 ** 31 - 1;

export const vaultDecider: Decider<VaultState, WithAt<VaultCommand>, VaultEvent, VaultReply> = {
  initial: () => ({
    balance: field('0'),
    totalStaked: field('0'),
    totalPaidOut: field('0'),
    totalExposure: field('0'),
    vaultAddress: field(''),
    maxPayoutCap: field('0'),
    maxLegs: field(0),
    minStake: field('0'),
    maxStake: field('0'),
    isActive: field(true),
    config: null,
    latest: null,
    updatedAt: 0,
  }),

  decide(state, cmd) {
    switch (cmd.type) {
      case 'VaultObserved': {
        const values: Values = {};
        for (const k of Object.keys(cmd.values) as (keyof VaultValues)[]) {
          const f = cmd.values[k];
          if (f && posAfter(f.pos, state[k].pos)) values[k] = f;
        }
        if (!Object.keys(values).length) return { events: [], reply: { result: 'stale' } };
        return { events: [{ type: 'ValuesSet', at: cmd.at, values }], reply: { result: 'applied' } };
      }
      case 'ConfigObserved': {
        if (state.config && !posAfter(cmd.pos, state.config.pos)) return { events: [], reply: { result: 'stale' } };
        return { events: [{ type: 'ConfigSet', pos: cmd.pos, at: cmd.at, config: cmd.config }], reply: { result: 'applied' } };
      }
      case 'VaultPatch': {
        const values = Object.fromEntries(
          Object.entries(cmd.fields)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => [k, { v, pos: state.latest }]),
        ) as Values;
        return { events: [{ type: 'ValuesSet', at: cmd.at, values }], reply: { result: 'applied' } };
      }
      case 'VaultSynced': {
        // A balance read at slot S reflects every transaction up to S: it ranks after all of them.
        const pos: Pos = [cmd.slot, MAX_POS, MAX_POS];
        if (!posAfter(pos, state.balance.pos)) return { events: [], reply: { result: 'stale' } };
        return { events: [{ type: 'ValuesSet', at: cmd.at, values: { balance: { v: cmd.balance, pos } } }], reply: { result: 'applied' } };
      }
    }
  },

  evolve(state, e) {
    const next: VaultState = { ...state, updatedAt: Math.max(state.updatedAt, e.at) };
    if (e.type === 'ValuesSet') {
      for (const [k, f] of Object.entries(e.values)) {
        (next as any)[k] = f;
        if (f.pos && posAfter(f.pos, next.latest)) next.latest = f.pos;
      }
      return next;
    }
    if (posAfter(e.pos, next.latest)) next.latest = e.pos;
    const c = e.config;
    next.config = { ...c, pos: e.pos };
    const set = (k: keyof VaultState, v: unknown) => {
      const f = (state as any)[k] as Field<unknown>;
      if (posAfter(e.pos, f.pos)) (next as any)[k] = { v, pos: e.pos };
    };
    set('vaultAddress', c.vault);
    set('maxLegs', c.maxLegs);
    set('minStake', c.minStake);
    set('maxStake', c.maxStake);
    set('maxPayoutCap', c.maxPayoutCap);
    set('isActive', !c.paused);
    return next;
  },
};

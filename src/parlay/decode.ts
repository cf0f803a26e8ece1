// Turns a webhook transaction into commands for the Parlay and Vault actors. An event's identity
// is (signature, its position among the transaction's events of the program), and its content the
// event's bytes (hashed, so that a different payload for the same identity is recognised).
import { createHash } from 'node:crypto';
import { coder } from '../chain/idl.ts';
import { programEventLines } from '../chain/logs.ts';
import {
  BIGINT_MAX,
  fitsBigint,
  parlayCommands,
  vaultCommands,
  type ParlayCommand,
  type Pos,
  type VaultCommand,
} from '../../topics/parlay-events.ts';
import type { RawTransaction } from './webhook-schema.ts';

export type Routed = { target: 'parlay'; key: string; cmd: ParlayCommand } | { target: 'vault'; cmd: VaultCommand };

/** One event of the program: its position, its line's data, the SHA-256 of its bytes (hex) and the commands it makes. */
export interface DecodedEvent {
  index: number;
  data: string;
  hash: string;
  name: string;
  commands: Routed[];
}

export interface DecodedTx {
  signature: string;
  events: DecodedEvent[];
  /** Every event's commands, in order. */
  commands: Routed[];
  /** Event lines of the program that did not decode, or whose values the program never emits: kept whole as dead letters. */
  undecodable: { index: number; data: string; reason: string }[];
  truncated: boolean;
  eventCount: number;
}

/** Dead-letter reasons are cut to this many characters (a reason may quote input). */
export const MAX_REASON_CHARS = 500;
export const reasonText = (s: string): string => (s.length > MAX_REASON_CHARS ? `${s.slice(0, MAX_REASON_CHARS - 1)}…` : s);

/**
 * A u64 of an event as the decimal text the mirror stores. The read models keep u64 values in
 * PostgreSQL bigint columns: one above 2^63 - 1 cannot be stored, and applying it would fail every
 * commit of its partition, so the event is unusable (dead-lettered whole, like a line that does
 * not decode).
 */
const str = (v: any): string => {
  const s = v === undefined || v === null ? '0' : v.toString();
  if (!fitsBigint(s)) throw new Error(`value ${s} is out of the range the mirror stores (0..${BIGINT_MAX})`);
  return s;
};
const num = (v: any): number => Number(v.toString());
/** Unix seconds of years 1..9999: PostgreSQL's timestamps (and ISO 8601 text) hold them, unlike any i64. */
const MIN_UNIX = -62_135_596_800;
const MAX_UNIX = 253_402_300_799;
const unix = (v: any): number => {
  const t = num(v);
  if (!Number.isSafeInteger(t) || t < MIN_UNIX || t > MAX_UNIX)
    throw new Error(`time ${v.toString()} is out of the range the mirror stores (years 1..9999)`);
  return t;
};
/** Base58 of the public keys events carry, remembered by their bytes: the same users and markets recur. */
const base58Of = new Map<string, string>();
const key58 = (v: any): string => {
  if (typeof v === 'string') return v;
  const bytes = (v.toBuffer() as Buffer).toString('latin1');
  let s = base58Of.get(bytes);
  if (s === undefined) {
    if (base58Of.size >= 100_000) base58Of.clear();
    s = v.toBase58() as string;
    base58Of.set(bytes, s);
  }
  return s;
};

export function decodeTransaction(tx: RawTransaction, programId: string): DecodedTx {
  const signature = tx.transaction.signatures[0];
  const { events, truncated } = programEventLines(tx.meta.logMessages ?? [], programId);
  const out: DecodedTx = { signature, events: [], commands: [], undecodable: [], truncated, eventCount: events.length };
  for (const line of events) {
    let ev: { name: string; data: any } | null = null;
    try {
      ev = coder.events.decode(line.data);
    } catch (e) {
      ev = null;
    }
    if (!ev) {
      out.undecodable.push({ ...line, reason: 'not an event of the program' });
      continue;
    }
    const pos: Pos = [tx.slot, tx.indexWithinBlock ?? 0, line.index];
    const base = { eventId: `${signature}:${line.index}`, pos, signature };
    try {
      const commands = route(ev.name, ev.data, base);
      vouchFor(commands);
      const hash = createHash('sha256').update(Buffer.from(line.data, 'base64')).digest('hex');
      out.events.push({ index: line.index, data: line.data, hash, name: ev.name, commands });
      out.commands.push(...commands);
    } catch (e) {
      out.undecodable.push({ ...line, reason: reasonText(`event ${ev.name} unusable: ${(e as Error).message}`) });
    }
  }
  return out;
}

/**
 * The commands are their topic's shapes by construction: every field comes through a guard of this
 * file (`str`, `unix`, `within`, `key58`, `legsOf`) from a value of the type the IDL gives it, and
 * the guards refuse what the topic's schema would (the event is dead-lettered with the reason). So
 * the commands are marked as parsed (topics/checked.ts) instead of going through the schema again:
 * that second pass cost ~9 µs an event, 12% of the in-process node's CPU on ingest, and on Kafka
 * the owner parses what it receives anyway. test/unit/parlay/decoded-commands.test.ts checks, over
 * arbitrary values of every event's fields, that the schema accepts whatever this emits unchanged.
 */
function vouchFor(commands: Routed[]) {
  for (const c of commands) {
    if (c.target === 'parlay') parlayCommands.vouch(c.cmd);
    else vaultCommands.vouch(c.cmd);
  }
}

/** A u8/u16/u32 field of an event within the values the program emits (IDL docs). */
function within(v: any, lo: number, hi: number, what: string, meaning = ''): number {
  const n = num(v);
  if (!Number.isInteger(n) || n < lo || n > hi)
    throw new Error(`${what} ${v} is not one the program emits (${lo}..${hi}${meaning ? `: ${meaning}` : ''})`);
  return n;
}

/** Legs per parlay the mirror takes (max_legs is a u8 of the config; the topic's schema bounds it at 64). */
const MAX_LEGS = 64;

function legsOf(legs: any[]) {
  if (!Array.isArray(legs) || legs.length < 1 || legs.length > MAX_LEGS)
    throw new Error(`a parlay has 1..${MAX_LEGS} legs, not ${legs?.length}`);
  return legs.map((l: any, i) => ({
    marketId: str(l.market_id),
    market: key58(l.market),
    outcome: within(l.outcome, 0, 1, `leg ${i} outcome`, '0 YES, 1 NO'),
    probability: within(l.probability, 1, 999_999, `leg ${i} probability`, 'fixed point 1e6, 0 < p < 1'),
  }));
}

function route(name: string, d: any, base: { eventId: string; pos: Pos; signature: string }): Routed[] {
  const vault = (values: Record<string, string>): Routed => ({
    target: 'vault',
    cmd: { type: 'VaultObserved', values: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { v, pos: base.pos }])) },
  });
  switch (name) {
    case 'ParlayCreated':
      return [
        {
          target: 'parlay',
          key: str(d.parlay_id),
          cmd: {
            type: 'ParlayCreated',
            ...base,
            parlayId: str(d.parlay_id),
            user: key58(d.user),
            stake: str(d.stake),
            combinedProbability: str(d.combined_probability),
            potentialPayout: str(d.potential_payout),
            createdAt: unix(d.created_at),
            legs: legsOf(d.legs),
          },
        },
        vault({ balance: str(d.vault_balance), totalStaked: str(d.total_staked), totalExposure: str(d.total_exposure) }),
      ];
    case 'LegSettled':
      return [
        {
          target: 'parlay',
          key: str(d.parlay_id),
          cmd: {
            type: 'LegSettled',
            ...base,
            parlayId: str(d.parlay_id),
            legIndex: num(d.leg_index),
            marketId: str(d.market_id),
            legStatus: within(d.leg_status, 1, 3, 'leg_status', '1 won, 2 lost, 3 voided'),
            parlayStatus: within(d.parlay_status, 0, 5, 'parlay_status', '0 active, 1 won, 2 lost, 3 claimed, 4 voided, 5 refunded'),
            legsWon: num(d.legs_won),
            legsLost: num(d.legs_lost),
            legsResolved: num(d.legs_resolved),
            actualPayout: str(d.actual_payout),
            settledAt: unix(d.settled_at),
          },
        },
        vault({ totalExposure: str(d.total_exposure) }),
      ];
    case 'ParlayClaimed':
      return [
        {
          target: 'parlay',
          key: str(d.parlay_id),
          cmd: {
            type: 'ParlayClaimed',
            ...base,
            parlayId: str(d.parlay_id),
            user: key58(d.user),
            amount: str(d.amount),
            claimedAt: unix(d.claimed_at),
          },
        },
        vault({ balance: str(d.vault_balance), totalPaidOut: str(d.total_paid_out) }),
      ];
    case 'ParlayVoided':
      return [
        {
          target: 'parlay',
          key: str(d.parlay_id),
          cmd: { type: 'ParlayVoided', ...base, parlayId: str(d.parlay_id), refund: str(d.refund), voidedAt: unix(d.voided_at) },
        },
        vault({ balance: str(d.vault_balance), totalPaidOut: str(d.total_paid_out), totalExposure: str(d.total_exposure) }),
      ];
    case 'ConfigInitialized':
    case 'ConfigUpdated': {
      const c = d.config;
      return [
        {
          target: 'vault',
          cmd: {
            type: 'ConfigObserved',
            ...base,
            config: {
              authority: key58(c.authority),
              collateralMint: key58(c.collateral_mint),
              vault: key58(c.vault),
              maxLegs: num(c.max_legs),
              minStake: str(c.min_stake),
              maxStake: str(c.max_stake),
              maxPayoutCap: str(c.max_payout_cap),
              exposureRatioBps: num(c.exposure_ratio_bps),
              houseEdgeBps: num(c.house_edge_bps),
              paused: Boolean(c.paused),
            },
          },
        },
      ];
    }
    case 'VaultSeeded':
    case 'VaultWithdrawn':
      return [vault({ balance: str(d.vault_balance) })];
    default:
      throw new Error(`unknown event ${name}`);
  }
}

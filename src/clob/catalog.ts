// The market catalog (contracts/clob.md, Markets): validated admin edits, reads shaped for the API.
import bs58 from 'bs58';
import { z } from 'zod';
import { decimalToMicro } from '../../topics/units.ts';

import type { Db } from '../db.ts';

/** Named prepared statements (src/store/reader.ts). */
interface Reader {
  query<R = any>(name: string, sql: string, params: unknown[]): Promise<R[]>;
}

const pubkey = z.string().refine((s) => {
  try {
    return bs58.decode(s).length === 32;
  } catch {
    return false;
  }
}, 'must be a base58 32-byte address');
/** A decimal in [0, 1e12) with up to 6 places, as a string or number → micro-units. */
const micro = (max: bigint) =>
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    const n = decimalToMicro(String(v), { maxWholeDigits: 12 });
    if (n === null) {
      ctx.addIssue({ code: 'custom', message: 'must be a decimal with at most 6 places' });
      return z.NEVER;
    }
    if (n > max) {
      ctx.addIssue({ code: 'custom', message: 'out of range' });
      return z.NEVER;
    }
    return n;
  });

const fields = {
  question: z.string().max(2000),
  yes_token_id: pubkey,
  no_token_id: pubkey,
  tick_size: micro(1_000_000n).refine((v) => v > 0n && 1_000_000n % v === 0n, 'must divide 1 (e.g. 0.01, 0.001)'),
  min_size: micro(10n ** 18n),
  taker_fee_bps: z.number().int().min(0).max(10_000),
  start_time: z.iso.datetime({ offset: true }).nullable(),
  delay_ms: z.number().int().min(0).max(86_400_000),
  status: z.enum(['open', 'closed', 'resolved']),
  on_chain_market_id: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).nullable(),
  market_address: pubkey.nullable(),
  reference_price: micro(1_000_000n).nullable(),
};

export const marketCreate = z
  .object({
    condition_id: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, 'must be 0x + 64 hex digits')
      .transform((s) => s.toLowerCase()),
    question: fields.question.default(''),
    yes_token_id: fields.yes_token_id,
    no_token_id: fields.no_token_id,
    tick_size: fields.tick_size.prefault('0.01'),
    min_size: fields.min_size.prefault('0'),
    taker_fee_bps: fields.taker_fee_bps.default(0),
    start_time: fields.start_time.default(null),
    delay_ms: fields.delay_ms.default(0),
    status: fields.status.default('open'),
    on_chain_market_id: fields.on_chain_market_id.default(null),
    market_address: fields.market_address.default(null),
    reference_price: fields.reference_price.default(null),
  })
  .strict()
  .refine((m) => m.yes_token_id !== m.no_token_id, 'yes_token_id and no_token_id must differ');

export const marketPatch = z
  .object(
    Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])) as {
      [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]>;
    },
  )
  .strict()
  .refine((m) => Object.keys(m).length > 0, 'give at least one field to change');

export type MarketCreate = z.infer<typeof marketCreate>;
export type MarketPatch = z.infer<typeof marketPatch>;

/** A market's tokens and sizes as raw catalog columns (micro-units as text): what the market-data reads and the feed key on. */
export interface MarketTokens {
  condition_id: string;
  yes_token_id: string;
  no_token_id: string;
  tick_size: string;
  min_size: string;
}

/** The book's view of a market (micro-units, ms). */
export interface MarketConfig {
  condition_id: string;
  yes_token_id: string;
  no_token_id: string;
  tick_size: bigint;
  min_size: bigint;
  taker_fee_bps: number;
  start_time: number | null;
  delay_ms: number;
  status: 'open' | 'closed' | 'resolved';
}

const dec = (col: string) =>
  `case when ${col} is null then null else trim(trailing '.' from trim(trailing '0' from (${col}::numeric / 1000000)::numeric(30,6)::text)) end`;
const ts = (col: string) =>
  `case when ${col} is null then null else to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end`;

export const MARKET_JSON = `json_build_object(
  'condition_id', m.condition_id, 'question', m.question, 'yes_token_id', m.yes_token_id, 'no_token_id', m.no_token_id,
  'tick_size', ${dec('m.tick_size')}, 'min_size', ${dec('m.min_size')}, 'taker_fee_bps', m.taker_fee_bps,
  'start_time', ${ts('m.start_time')}, 'delay_ms', m.delay_ms, 'status', m.status, 'on_chain_market_id', m.on_chain_market_id,
  'market_address', m.market_address, 'reference_price', ${dec('m.reference_price')},
  'created_at', ${ts('m.created_at')}, 'updated_at', ${ts('m.updated_at')})`;

const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

export class CatalogConflict extends Error {}

export class Catalog {
  /** `reader`: the hot reads' prepared statements (src/store/reader.ts); without one, plain queries. */
  constructor(
    private db: () => Db,
    private reader?: Reader,
  ) {}

  async create(m: MarketCreate): Promise<unknown | null> {
    const rows = await this.db().execute(
      `insert into markets (condition_id, question, yes_token_id, no_token_id, tick_size, min_size, taker_fee_bps, start_time, delay_ms,
         status, on_chain_market_id, market_address, reference_price, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), now()) on conflict do nothing returning condition_id`,
      [
        m.condition_id,
        m.question,
        m.yes_token_id,
        m.no_token_id,
        m.tick_size.toString(),
        m.min_size.toString(),
        m.taker_fee_bps,
        m.start_time,
        m.delay_ms,
        m.status,
        m.on_chain_market_id,
        m.market_address,
        m.reference_price?.toString() ?? null,
      ],
    );
    return rows.length ? this.get(m.condition_id) : null;
  }

  async patch(conditionId: string, p: MarketPatch): Promise<unknown | null> {
    const sets: string[] = [];
    const params: unknown[] = [];
    for (const [k, v] of Object.entries(p)) {
      if (v === undefined) continue;
      sets.push(`${k} = ?`);
      params.push(typeof v === 'bigint' ? v.toString() : v);
    }
    let rows: any[];
    try {
      rows = await this.db().execute(
        `update markets set ${sets.join(', ')}, updated_at = now() where condition_id = ? returning condition_id`,
        [...params, conditionId.toLowerCase()],
      );
    } catch (e: any) {
      if (e?.code === '23505') throw new CatalogConflict('on_chain_market_id is taken by another market');
      throw e;
    }
    return rows.length ? this.get(conditionId) : null;
  }

  async get(conditionId: string): Promise<any | null> {
    const rows = await this.db().execute(`select ${MARKET_JSON} as j from markets m where m.condition_id = ?`, [conditionId.toLowerCase()]);
    return rows.length ? parse(rows[0].j) : null;
  }

  async list(f: { status?: string } = {}): Promise<unknown[]> {
    const rows = await this.db().execute(
      `select ${MARKET_JSON} as j from markets m ${f.status ? 'where m.status = ?' : ''} order by m.created_at desc, m.condition_id`,
      f.status ? [f.status] : [],
    );
    return rows.map((r) => parse(r.j));
  }

  /** The book's view of a market. */
  async config(conditionId: string): Promise<MarketConfig | null> {
    const rows = await this.db().execute(`select ${CONFIG_COLUMNS} from markets where condition_id = ?`, [conditionId.toLowerCase()]);
    return rows.length ? toConfig(rows[0]) : null;
  }

  /** The market an outcome token belongs to. */
  async byToken(tokenId: string): Promise<MarketConfig | null> {
    // One round trip on the order path (both token columns are indexed).
    const rows = await this.db().execute(`select ${CONFIG_COLUMNS} from markets where yes_token_id = ? or no_token_id = ? limit 1`, [
      tokenId,
      tokenId,
    ]);
    return rows.length ? toConfig(rows[0]) : null;
  }
}

/** The columns a MarketConfig is built from (`toConfig`). */
export const CONFIG_COLUMNS = `condition_id, yes_token_id, no_token_id, tick_size::text, min_size::text, taker_fee_bps,
  (extract(epoch from start_time) * 1000)::bigint::text as start_ms, delay_ms, status`;

export function toConfig(r: any): MarketConfig {
  return {
    condition_id: r.condition_id,
    yes_token_id: r.yes_token_id,
    no_token_id: r.no_token_id,
    tick_size: BigInt(r.tick_size),
    min_size: BigInt(r.min_size),
    taker_fee_bps: r.taker_fee_bps,
    start_time: r.start_ms === null ? null : Number(r.start_ms),
    delay_ms: r.delay_ms,
    status: r.status,
  };
}

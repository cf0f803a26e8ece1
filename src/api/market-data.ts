// Requests and answers of the public market-data routes (docs/market-data.md): the HTTP contract the
// routes validate with and the typed client reads.
import { z } from 'zod';
import { MAX_HISTORY_POINTS } from '../clob/market-data.ts';
import { MAX_MARKET_TRADES } from '../clob/market-trades.ts';

/** Most tokens (or token and side pairs) one batch request may name. */
export const MAX_BATCH = 100;

/** An outcome token: a base58 mint address, bounded by length before anything else looks at it. */
const tokenId = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'a token id is a base58 address of 32 to 44 characters');
const side = z.enum(['BUY', 'SELL']);
const unix = z.coerce.number().int().min(0).max(100_000_000_000);
const conditionId = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a market is a condition id: 0x + 64 hex digits');

export const marketDataRequest = {
  token: z.object({ token_id: tokenId }),
  price: z.object({ token_id: tokenId, side: side.meta({ description: 'BUY: the best bid; SELL: the best ask' }) }),
  tokens: z
    .array(z.object({ token_id: tokenId }))
    .min(1)
    .max(MAX_BATCH),
  prices: z
    .array(z.object({ token_id: tokenId, side }))
    .min(1)
    .max(MAX_BATCH),
  trades: z.object({
    market: conditionId.meta({ description: 'the condition id' }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_MARKET_TRADES)
      .default(20)
      .meta({ description: `trades to return, newest first (1 to ${MAX_MARKET_TRADES})` }),
  }),
  history: z
    .object({
      market: tokenId.meta({ description: 'the outcome token id (not the condition id)' }),
      interval: z
        .enum(['1m', '1h', '6h', '1d', '1w', 'max'])
        .optional()
        .meta({ description: 'the window before endTs (default now); max: since the first trade' }),
      fidelity: z.coerce
        .number()
        .int()
        .min(1)
        .max(43_200)
        .optional()
        .meta({ description: 'bucket size in minutes (default: the finest that keeps the answer within 1,000 points)' }),
      startTs: unix.optional().meta({ description: 'window start, unix seconds (instead of interval)' }),
      endTs: unix.optional().meta({ description: 'window end, unix seconds (inclusive; default now)' }),
    })
    .refine((q) => q.interval !== undefined || q.startTs !== undefined, 'give interval or startTs')
    .refine((q) => q.interval === undefined || q.startTs === undefined, 'interval and startTs exclude each other'),
};

const decimal = z
  .string()
  .regex(/^-?\d+(\.\d+)?$/)
  .meta({ description: 'exact decimal string' });
const level = z.strictObject({ price: decimal, size: decimal });
export const marketDataResponse = {
  book: z
    .strictObject({
      market: z.string().meta({ description: 'condition id' }),
      asset_id: z.string().meta({ description: 'the token id' }),
      timestamp: z.string().meta({ description: 'ms since the epoch when the node answered' }),
      hash: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .meta({ description: 'sha256 hex of the canonical book (levels, tick, minimum size)' }),
      bids: z.array(level).meta({ description: 'best (highest) first' }),
      asks: z.array(level).meta({ description: 'best (lowest) first' }),
      tick_size: decimal,
      min_order_size: decimal,
      neg_risk: z.literal(false),
      last_trade_price: decimal.nullable().meta({ description: "the market's last trade in this token's terms" }),
      seq: z.number().int().meta({ description: "the market's book sequence: grows with every change of its resting book" }),
    })
    .meta({ id: 'OrderBookSummary' }),
  price: z.strictObject({ price: decimal.nullable() }),
  prices: z.record(z.string(), z.partialRecord(side, decimal.nullable())),
  mid: z.strictObject({ mid: decimal.nullable() }),
  spread: z.strictObject({ spread: decimal.nullable() }),
  byToken: z.record(z.string(), decimal.nullable()),
  tick: z.strictObject({ minimum_tick_size: decimal }),
  trades: z
    .array(
      z
        .strictObject({
          id: z.string(),
          asset_id: z.string().meta({ description: 'the token the taker traded' }),
          side: side.meta({ description: "the taker's side" }),
          price: decimal.meta({ description: "in the asset's terms" }),
          size: decimal,
          match_time: z.string().regex(/^\d+$/).meta({ description: 'unix seconds as text' }),
          status: z.enum(['MATCHED', 'MINED', 'CONFIRMED', 'RETRYING', 'FAILED']),
        })
        .meta({ id: 'PublicTrade' }),
    )
    .max(MAX_MARKET_TRADES),
  history: z.strictObject({ history: z.array(z.strictObject({ t: z.number().int(), p: decimal })).max(MAX_HISTORY_POINTS) }),
};

// The public ledger (`ledger.orders`, `ledger.trades`; topics/README.md "The public ledger"): every
// message a stream consumer, the SSE route, the WebSocket feed and the settlement executor read,
// as zod schemas. The ledger projection builds them (typed by these), the relay and the SSE route
// wrap them in the envelope `{ v: 1, type, market, seq, at, ... }` (`ledgerWire`), readers parse
// them with `ledgerMessage`.
import { z } from 'zod';

/** A decimal string of units ("0.41", "5"): topics/units.ts. */
const dec = z.string().regex(/^-?\d+(\.\d+)?$/);
const unixSeconds = z.string().regex(/^\d+$/);
const side = z.enum(['BUY', 'SELL']);
const outcome = z.enum(['YES', 'NO']);

export const ledgerOrder = z.object({
  id: z.string(),
  owner: z.string(),
  asset_id: z.string(),
  side,
  outcome,
  price: dec,
  original_size: dec,
  size_matched: dec,
  status: z.enum(['LIVE', 'MATCHED', 'DELAYED']),
  type: z.enum(['GTC', 'FOK', 'GTD']),
  expiration: z.string(),
  created_at: unixSeconds,
  associate_trades: z.array(z.string()),
});

export const ledgerMakerOrder = z.object({
  order_id: z.string(),
  owner: z.string(),
  maker_address: z.string(),
  matched_amount: dec,
  price: dec,
  fee_rate_bps: z.string(),
  asset_id: z.string(),
  outcome,
  side,
});

export const ledgerTrade = z.object({
  id: z.string(),
  taker_order_id: z.string(),
  market: z.string(),
  asset_id: z.string(),
  side,
  size: dec,
  price: dec,
  fee_rate_bps: z.string(),
  status: z.literal('MATCHED'),
  match_type: z.enum(['COMPLEMENTARY', 'MINT', 'MERGE']),
  match_time: unixSeconds,
  owner: z.string(),
  maker_address: z.string(),
  transaction_hash: z.string(),
  maker_orders: z.array(ledgerMakerOrder),
});

const orderEnd = { order_id: z.string(), owner: z.string(), size_matched: dec };

/** `ledger.orders` payloads, by type. */
export const ledgerOrdersMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('order_placed'), order: ledgerOrder }),
  z.object({ type: z.literal('order_delayed'), order: ledgerOrder }),
  z.object({ type: z.literal('order_updated'), ...orderEnd, status: z.enum(['LIVE', 'MATCHED']), trade_id: z.string() }),
  z.object({ type: z.literal('order_cancelled'), ...orderEnd, status: z.literal('CANCELED'), reason: z.string().nullable() }),
  z.object({ type: z.literal('order_ejected'), ...orderEnd, status: z.enum(['EXPIRED', 'EJECTED']), reason: z.string().nullable() }),
  z.object({
    type: z.literal('order_invalidated'),
    ...orderEnd,
    status: z.literal('INVALIDATED'),
    reason: z.string().nullable(),
    trade_id: z.string().optional(),
  }),
]);

const tradeNews = {
  trade_id: z.string(),
  transaction_hash: z.string(),
  attempt: z.number().int().optional(),
  reason: z.string().optional(),
  last_update: unixSeconds,
};

/** `ledger.trades` payloads, by type. */
export const ledgerTradesMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('trade_matched'), trade: ledgerTrade }),
  z.object({ type: z.literal('trade_mined'), status: z.literal('MINED'), ...tradeNews }),
  z.object({ type: z.literal('trade_confirmed'), status: z.literal('CONFIRMED'), ...tradeNews }),
  z.object({ type: z.literal('trade_retrying'), status: z.literal('RETRYING'), ...tradeNews }),
  z.object({ type: z.literal('trade_failed'), status: z.literal('FAILED'), ...tradeNews }),
]);

export type LedgerOrdersMessage = z.infer<typeof ledgerOrdersMessage>;
export type LedgerTradesMessage = z.infer<typeof ledgerTradesMessage>;
export type LedgerPayload = LedgerOrdersMessage | LedgerTradesMessage;

/** The envelope every ledger message travels in. */
export const ledgerEnvelope = z.object({ v: z.literal(1), market: z.string(), seq: z.number().int().positive(), at: z.string() });

/** A whole message as a consumer reads it off either topic. */
export const ledgerMessage = z.union([ledgerEnvelope.and(ledgerOrdersMessage), ledgerEnvelope.and(ledgerTradesMessage)]);
export type LedgerMessage = z.infer<typeof ledgerMessage>;

/** The wire form of a stored ledger row: the envelope around its payload. */
export function ledgerWire(r: { market: string; seq: number | string; at: string | Date; payload: LedgerPayload }): LedgerMessage {
  const { type, ...rest } = r.payload;
  return { v: 1, type, market: r.market, seq: Number(r.seq), at: new Date(r.at).toISOString(), ...rest } as LedgerMessage;
}

/** What the settlement executor needs of a `trade_matched` (read leniently: a ledger written before a field was added still counts). */
export const tradeMatchedRef = ledgerEnvelope
  .pick({ market: true })
  .extend({ type: z.literal('trade_matched'), trade: z.object({ id: z.string().min(1) }) });

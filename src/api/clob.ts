// Requests of the order book's routes (contracts/clob.md): the HTTP contract the routes validate with
// and the typed client and the ledger reads take their parameter types from.
import { z } from 'zod';

const orderIdSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'an order id is 0x + 64 hex digits')
  .transform((s) => s.toLowerCase());
const conditionId = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'a market is a condition id: 0x + 64 hex digits')
  .transform((s) => s.toLowerCase());
/** Unix seconds PostgreSQL can hold as a timestamp (up to the end of year 9999): beyond it a 400, not a database error. */
const unixSeconds = z.coerce.number().int().nonnegative().max(253_402_300_799);
/** An id, address or key as a client may send it: 1–128 printable ASCII characters (no space, no control character). */
const idText = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x21-\x7e]+$/, 'must be 1 to 128 printable ASCII characters');

// The request schemas of the routes below: they validate, and they are what /openapi.json shows.
export const clobRequest = {
  marketParams: z.object({ conditionId }),
  orderParams: z.object({ id: orderIdSchema }),
  cancel: z.object({ orderID: idText }),
  cancelBatch: z.object({ orderIDs: z.array(idText).max(1000) }),
  cancelMarket: z.object({ market: conditionId, asset_id: idText.optional() }),
  sizeUpdate: z.object({
    trade_id: idText,
    orders: z.array(orderIdSchema).max(1000),
    reason: z.string().max(200).default('settlement failed'),
  }),
  internalHeaders: z.object({ 'x-internal-token': z.string() }),
  marketQuery: z.object({ market: conditionId.optional() }),
  // Kept as text and compared exactly in micro-units squared (price × size): a float product
  // (0.29 × 100 = 28.999…) would drop an order whose value is exactly min_value.
  valueRange: z.object({
    min_value: z
      .string()
      .trim()
      .regex(/^\d{1,15}(\.\d{1,12})?$/, 'min_value is a non-negative decimal number (at most 12 places)'),
  }),
  trades: z.object({
    id: idText.optional(),
    owner: idText.optional(),
    taker: idText.optional(),
    maker: idText.optional(),
    market: conditionId.optional(),
    asset_id: idText.optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
    before: unixSeconds.optional(),
    after: unixSeconds.optional(),
  }),
  lastTrade: z.object({ market: conditionId }),
  stream: z.object({ market: conditionId, from: z.enum(['beginning', 'now']).default('now'), last_event_id: idText.optional() }),
  streamHeaders: z.object({ 'last-event-id': idText.optional() }),
};

/** GET /v1/trades parameters, validated (limit defaulted, times as unix seconds): what the ledger reads. */
export type TradeFilter = z.output<typeof clobRequest.trades>;
/** The same as a client gives them (every one optional). */
export type TradeQuery = Partial<TradeFilter>;

// Response schemas of both areas (SPEC sections 2 and 4, contracts/service.md and clob.md), as zod
// schemas: they document the answers in /openapi.json, type the client (src/client/), and check
// real answers in the tests. Strict objects: a field the docs do not name is a mismatch.
import { z } from 'zod';

const ts = z.string().meta({ description: 'ISO 8601 UTC timestamp', examples: ['2026-11-21T10:00:00.000Z'] });
const decimal = z
  .string()
  .regex(/^\d+(\.\d+)?$/)
  .meta({ description: 'decimal string of units' });
const unixText = z.string().regex(/^\d+$/).meta({ description: 'unix seconds as a decimal string' });
const micro = z.number().int().meta({ description: 'integer micro-units (1e6 per unit)' });
const hex32 = z.string().regex(/^0x[0-9a-f]{64}$/);

/** The error body of every route: `{ error, message }` (some add fields). */
export const errorBody = z.object({ error: z.string(), message: z.string() }).catchall(z.unknown()).meta({ id: 'Error' });

// ---- parlay side --------------------------------------------------------------------------------

export const parlayLeg = z
  .strictObject({
    leg_index: z.number().int(),
    on_chain_market_id: z.number().int(),
    market_address: z.string(),
    selected_outcome: z.enum(['YES', 'NO']),
    probability_at_entry: z.string().meta({ description: 'decimal string, 6 places' }),
    status: z.enum(['pending', 'won', 'lost', 'voided']),
    resolved_at: ts.nullable(),
    question: z.string(),
  })
  .meta({ id: 'ParlayLeg' });

export const parlay = z
  .strictObject({
    id: z.string().meta({ description: 'internal id (UUID)' }),
    parlay_id: z.number().int(),
    user_wallet: z.string(),
    stake: micro,
    combined_probability: z.string().meta({ description: 'decimal string, 12 places' }),
    potential_payout: micro,
    actual_payout: micro,
    status: z.enum(['active', 'won', 'lost', 'claimed', 'voided', 'refunded']),
    legs_total: z.number().int(),
    legs_won: z.number().int(),
    legs_lost: z.number().int(),
    legs_resolved: z.number().int(),
    tx_signature: z.string(),
    claim_tx_signature: z.string(),
    created_at: ts,
    settled_at: ts.nullable(),
    claimed_at: ts.nullable(),
    legs: z.array(parlayLeg),
  })
  .meta({ id: 'Parlay' });

export const vault = z
  .strictObject({
    vault_address: z.string(),
    balance: micro,
    total_staked: micro,
    total_paid_out: micro,
    total_exposure: micro,
    max_payout_cap: micro,
    max_legs: z.number().int(),
    min_stake: micro,
    max_stake: micro,
    is_active: z.boolean(),
    updated_at: ts.meta({
      description: 'ISO 8601 UTC timestamp of the latest change; before the first vault event, when the mirror was created',
    }),
  })
  .meta({ id: 'Vault' });

export const dataOf = <T extends z.ZodType>(s: T) => z.strictObject({ data: s });

export const adminParlayPage = z
  .strictObject({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(parlay),
  })
  .meta({ id: 'ParlayPage' });

export const voidResult = z.strictObject({ parlay_id: z.number().int(), tx_signature: z.string() });

export const webhookResult = z.strictObject({ processed: z.number().int(), skipped: z.number().int() });

// ---- market catalog -----------------------------------------------------------------------------

export const market = z
  .strictObject({
    condition_id: hex32,
    question: z.string(),
    yes_token_id: z.string(),
    no_token_id: z.string(),
    tick_size: decimal,
    min_size: decimal,
    taker_fee_bps: z.number().int(),
    start_time: ts.nullable(),
    delay_ms: z.number().int(),
    status: z.enum(['open', 'closed', 'resolved']),
    on_chain_market_id: z.number().int().nullable(),
    market_address: z.string().nullable(),
    reference_price: decimal.nullable(),
    created_at: ts,
    updated_at: ts,
  })
  .meta({ id: 'Market' });

const level = z.strictObject({ price: decimal, size: decimal }).nullable();

export const bookMarket = market.extend({ best_bid: level, best_ask: level, last_price: decimal.nullable() }).meta({ id: 'BookMarket' });

// ---- order book ---------------------------------------------------------------------------------

export const clobConfig = z
  .strictObject({
    collateral_mint: z.string().nullable(),
    delegate: z.string().nullable(),
    taker_fee_curve: z.string(),
    token_ttl_seconds: z.number().int(),
    mint_merge_matching: z.boolean(),
  })
  .meta({ id: 'ClobConfig' });

export const accessToken = z
  .strictObject({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number().int() })
  .meta({ id: 'AccessToken' });

export const placeResult = z
  .strictObject({
    success: z.literal(true),
    errorMsg: z.string(),
    orderID: hex32,
    status: z.enum(['live', 'matched', 'delayed', 'unmatched']),
    makingAmount: z.string(),
    takingAmount: z.string(),
    tradeIDs: z.array(z.string()),
    warnings: z.array(z.string()),
  })
  .meta({ id: 'PlaceOrderResult' });

export const REJECT_CODES = [
  'INVALID_SIGNATURE',
  'INVALID_ORDER',
  'INVALID_TICK_SIZE',
  'INVALID_MIN_SIZE',
  'FEE_RATE_TOO_LOW',
  'INSUFFICIENT_BALANCE',
  'FOK_NOT_FILLED',
  'ORDER_EXPIRED',
  'MARKET_NOT_FOUND',
  'MARKET_CLOSED',
  'DUPLICATE_ORDER',
  'NOT_OWNER',
] as const;

export const placeRejection = z
  .strictObject({ success: z.literal(false), errorMsg: z.string(), code: z.enum(REJECT_CODES) })
  .meta({ id: 'OrderRejection' });

export const cancelResult = z
  .strictObject({
    canceled: z.array(z.string()),
    not_canceled: z
      .record(z.string(), z.string())
      .meta({ description: 'order hash → reason (already filled, already cancelled, not yours, order not found)' }),
  })
  .meta({ id: 'CancelResult' });

export const bookOrder = z
  .strictObject({
    orderHash: hex32,
    maker: z.string(),
    market: hex32,
    assetId: z.string(),
    side: z.enum(['BUY', 'SELL']),
    price: decimal,
    originalSize: decimal,
    remainingSize: decimal,
    feeRateBps: z.string(),
    orderType: z.enum(['GTC', 'FOK', 'GTD']),
    expiration: z.string(),
    createdAt: ts,
  })
  .meta({ id: 'BookOrder' });

export const OPEN_ORDER_STATUSES = ['LIVE', 'DELAYED', 'MATCHED', 'CANCELED', 'EJECTED', 'INVALIDATED', 'EXPIRED'] as const;

export const openOrder = z
  .strictObject({
    id: hex32,
    status: z.enum(OPEN_ORDER_STATUSES),
    owner: z.string(),
    maker_address: z.string(),
    market: hex32,
    asset_id: z.string(),
    side: z.enum(['BUY', 'SELL']),
    outcome: z.string(),
    original_size: decimal,
    size_matched: decimal,
    price: decimal,
    associate_trades: z.array(z.string()),
    type: z.enum(['GTC', 'FOK', 'GTD']),
    created_at: unixText,
    expiration: z.string(),
  })
  .meta({ id: 'OpenOrder' });

export const makerOrder = z
  .strictObject({
    order_id: hex32,
    owner: z.string(),
    maker_address: z.string(),
    matched_amount: decimal,
    price: decimal,
    fee_rate_bps: z.string(),
    asset_id: z.string(),
    outcome: z.string(),
    side: z.enum(['BUY', 'SELL']),
  })
  .meta({ id: 'MakerOrder' });

export const TRADE_STATUSES = ['MATCHED', 'MINED', 'CONFIRMED', 'RETRYING', 'FAILED'] as const;

export const tradeSummary = z
  .strictObject({
    id: z.string(),
    taker_order_id: hex32,
    market: hex32,
    asset_id: z.string(),
    side: z.enum(['BUY', 'SELL']),
    size: decimal,
    price: decimal,
    fee_rate_bps: z.string(),
    status: z.enum(TRADE_STATUSES),
    match_type: z.enum(['COMPLEMENTARY', 'MINT', 'MERGE']),
    match_time: unixText,
    last_update: unixText,
    owner: z.string(),
    maker_address: z.string(),
    trader_side: z.enum(['TAKER', 'MAKER']),
    transaction_hash: z.string().nullable(),
    maker_orders: z.array(makerOrder),
  })
  .meta({ id: 'TradeSummary' });

export const lastTrade = z
  .strictObject({ market: hex32, asset_id: z.string(), price: decimal, size: decimal, side: z.enum(['BUY', 'SELL']), match_time: unixText })
  .meta({ id: 'LastTrade' });

export const sizeUpdateResult = z
  .strictObject({ invalidated: z.array(z.string()), not_found: z.array(z.string()) })
  .meta({ id: 'SizeUpdateResult' });

export const sseStream = z.string().meta({
  description:
    'Server-Sent Events: `id:` the stream position `o<orders seq>.t<trades seq>` (resume with Last-Event-ID), `event:` the ledger message type, ' +
    '`data:` the ledger message JSON `{ v: 1, type, market, seq, at, topic, ... }` (topics/README.md)',
});

// ---- operations ---------------------------------------------------------------------------------

export const healthBody = z.object({ status: z.string() }).catchall(z.unknown());
export const readyBody = z
  .object({ status: z.enum(['ready', 'not_ready']), checks: z.record(z.string(), z.string()) })
  .catchall(z.unknown());

export type Parlay = z.output<typeof parlay>;
export type Vault = z.output<typeof vault>;
export type Market = z.output<typeof market>;
export type BookMarket = z.output<typeof bookMarket>;
export type ClobConfig = z.output<typeof clobConfig>;
export type AccessToken = z.output<typeof accessToken>;
export type PlaceResult = z.output<typeof placeResult>;
export type CancelResult = z.output<typeof cancelResult>;
export type BookOrder = z.output<typeof bookOrder>;
export type OpenOrder = z.output<typeof openOrder>;
export type TradeSummary = z.output<typeof tradeSummary>;
export type MakerOrder = z.output<typeof makerOrder>;
export type LastTrade = z.output<typeof lastTrade>;
export type SizeUpdateResult = z.output<typeof sizeUpdateResult>;
export type ParlayPage = z.output<typeof adminParlayPage>;
